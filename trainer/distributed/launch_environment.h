#pragma once
// Where this trainer process sits in a distributed run: detected from the variables that
// launchers set (the trainer's own local launcher, torchrun, Slurm's srun, Open MPI's mpirun),
// with the `distributed` section of the configuration as the fallback. Torch-free.

#include "core/run_config.h"

#include <functional>
#include <optional>
#include <string>

namespace tb::trainer::distributed {

/// One process's place in the run.
struct LaunchInfo {
  /// "single" (one process, nothing to connect), "local" (a rank started by this trainer's own
  /// launcher), "torchrun", "slurm" or "mpirun".
  std::string launcher = "single";
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        ///< index among the ranks of this node
  int local_world_size = 1;  ///< ranks on this node
  int node_rank = 0;
  std::string master_addr;  ///< host of the c10d store
  int master_port = 0;      ///< port of the c10d store
  /// The c10d FileStore the trainer's own launcher keeps for a one-node run (TB_STORE_FILE), in
  /// a folder only this user may enter; empty: the TCP store at master_addr:master_port.
  std::string store_file;
  /// The launcher already serves the store (torchrun's agent, our own launcher): connect as a
  /// client even on rank 0.
  bool store_served_by_launcher = false;

  bool distributed() const { return world_size > 1; }
};

/// Reads a variable: its value, or nothing when unset.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (getenv).
Environment processEnvironment();

/// Detects the launcher from `env`, in this order: the trainer's own launcher (TB_LAUNCHER=local;
/// TB_STORE_FILE names its store file on one node),
/// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE; GROUP_RANK for the node), mpirun
/// (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE), Slurm srun tasks (SLURM_PROCID,
/// SLURM_NTASKS or SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_NODELIST or
/// SLURM_JOB_NODELIST; only inside a job step, i.e. with SLURM_STEP_ID, so a batch script that
/// runs the trainer directly stays a single process). The store's address is MASTER_ADDR /
/// MASTER_PORT when set, else (Slurm) the first host of the node list, else
/// `config.master_addr` / `config.master_port`. Without a launcher: "single".
/// Throws UserError ("launch_environment_invalid") naming the variable that is malformed or
/// inconsistent (e.g. RANK >= WORLD_SIZE).
LaunchInfo detectLaunch(const core::DistributedConfig& config, const Environment& env);

/// First host of a Slurm node list: "gpu[03-07,12],login1" -> "gpu03", "node7" -> "node7".
std::string firstSlurmHost(const std::string& nodelist);

/// "rank 1 of 4 (torchrun, node 0, local rank 1), store 10.0.0.1:29500" (or the store file).
std::string describe(const LaunchInfo& info);

/// Whether `host` names this machine's loopback by itself: "localhost", "::1", 127.x.y.z.
bool namesLoopback(const std::string& host);

}  // namespace tb::trainer::distributed
