// Launcher detection from the variables torchrun, Slurm's srun, Open MPI's mpirun and the
// trainer's own launcher set.
#include "trainer/distributed/launch_environment.h"
#include "trainer/user_error.h"

#include <gtest/gtest.h>

#include <map>

namespace tb::trainer::distributed {
namespace {

Environment fakeEnvironment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

core::DistributedConfig config() {
  core::DistributedConfig c;
  c.master_addr = "config-host";
  c.master_port = 29400;
  return c;
}

TEST(LaunchEnvironment, NothingSetIsOneProcess) {
  const LaunchInfo info = detectLaunch(config(), fakeEnvironment({}));
  EXPECT_EQ(info.launcher, "single");
  EXPECT_EQ(info.world_size, 1);
  EXPECT_FALSE(info.distributed());
}

TEST(LaunchEnvironment, Torchrun) {
  const LaunchInfo info =
      detectLaunch(config(), fakeEnvironment({{"RANK", "5"},
                                              {"WORLD_SIZE", "8"},
                                              {"LOCAL_RANK", "1"},
                                              {"LOCAL_WORLD_SIZE", "4"},
                                              {"GROUP_RANK", "1"},
                                              {"MASTER_ADDR", "10.0.0.7"},
                                              {"MASTER_PORT", "29501"},
                                              {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  EXPECT_EQ(info.launcher, "torchrun");
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.world_size, 8);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 4);
  EXPECT_EQ(info.node_rank, 1);
  EXPECT_EQ(info.master_addr, "10.0.0.7");
  EXPECT_EQ(info.master_port, 29501);
  EXPECT_TRUE(info.store_served_by_launcher);
}

TEST(LaunchEnvironment, SlurmTaskTakesTheFirstNodeAsStoreHost) {
  const LaunchInfo info =
      detectLaunch(config(), fakeEnvironment({{"SLURM_PROCID", "3"},
                                              {"SLURM_NTASKS", "4"},
                                              {"SLURM_LOCALID", "1"},
                                              {"SLURM_NODEID", "1"},
                                              {"SLURM_STEP_ID", "0"},
                                              {"SLURM_TASKS_PER_NODE", "2(x2)"},
                                              {"SLURM_JOB_NODELIST", "gpu[07-08,12],login1"}}));
  EXPECT_EQ(info.launcher, "slurm");
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.node_rank, 1);
  EXPECT_EQ(info.master_addr, "gpu07");
  EXPECT_EQ(info.master_port, 29400);  // from the configuration
  EXPECT_FALSE(info.store_served_by_launcher);
}

TEST(LaunchEnvironment, SlurmBatchScriptWithoutAStepIsOneProcess) {
  const LaunchInfo info = detectLaunch(
      config(), fakeEnvironment(
                    {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_NODELIST", "n1"}}));
  EXPECT_EQ(info.launcher, "single");
}

TEST(LaunchEnvironment, Mpirun) {
  const LaunchInfo info =
      detectLaunch(config(), fakeEnvironment({{"OMPI_COMM_WORLD_RANK", "2"},
                                              {"OMPI_COMM_WORLD_SIZE", "4"},
                                              {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                              {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                              {"MASTER_ADDR", "head"}}));
  EXPECT_EQ(info.launcher, "mpirun");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.world_size, 4);
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.node_rank, 1);
  EXPECT_EQ(info.master_addr, "head");
  EXPECT_EQ(info.master_port, 29400);
}

TEST(LaunchEnvironment, OwnLauncherWins) {
  const LaunchInfo info = detectLaunch(config(), fakeEnvironment({{"TB_LAUNCHER", "local"},
                                                                  {"RANK", "1"},
                                                                  {"WORLD_SIZE", "2"},
                                                                  {"LOCAL_RANK", "1"},
                                                                  {"LOCAL_WORLD_SIZE", "2"},
                                                                  {"MASTER_ADDR", "127.0.0.1"},
                                                                  {"MASTER_PORT", "40000"},
                                                                  {"OMPI_COMM_WORLD_RANK", "0"}}));
  EXPECT_EQ(info.launcher, "local");
  EXPECT_EQ(info.rank, 1);
  EXPECT_TRUE(info.store_served_by_launcher);
  EXPECT_EQ(info.master_port, 40000);
  EXPECT_TRUE(info.store_file.empty());
  // On one node the launcher's store is a file.
  const LaunchInfo one_node =
      detectLaunch(config(), fakeEnvironment({{"TB_LAUNCHER", "local"},
                                              {"RANK", "0"},
                                              {"WORLD_SIZE", "2"},
                                              {"LOCAL_RANK", "0"},
                                              {"LOCAL_WORLD_SIZE", "2"},
                                              {"TB_STORE_FILE", "/tmp/tb-store-x/store"}}));
  EXPECT_EQ(one_node.store_file, "/tmp/tb-store-x/store");
  EXPECT_EQ(describe(one_node),
            "rank 0 of 2 (local, node 0, local rank 0 of 2), store /tmp/tb-store-x/store");
}

TEST(LaunchEnvironment, InconsistentVariablesNameTheVariable) {
  try {
    detectLaunch(config(),
                 fakeEnvironment({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "0"}}));
    FAIL() << "RANK 2 of 2 accepted";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), "launch_environment_invalid");
    EXPECT_NE(std::string(e.what()).find("RANK"), std::string::npos) << e.what();
  }
  try {
    detectLaunch(config(),
                 fakeEnvironment({{"OMPI_COMM_WORLD_RANK", "x1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
    FAIL() << "a non-number accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_RANK"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x1"), std::string::npos) << e.what();
  }
}

TEST(LaunchEnvironment, FirstSlurmHost) {
  EXPECT_EQ(firstSlurmHost("node7"), "node7");
  EXPECT_EQ(firstSlurmHost("a1,b2"), "a1");
  EXPECT_EQ(firstSlurmHost("gpu[03-07,12],login1"), "gpu03");
  EXPECT_EQ(firstSlurmHost("rack1-n[9,11]"), "rack1-n9");
}

}  // namespace
}  // namespace tb::trainer::distributed
