#include "trainer/distributed/launch_environment.h"

#include "trainer/user_error.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace tb::trainer::distributed {
namespace {

UserError badVariable(const std::string& name, const std::string& why) {
  return UserError("launch_environment_invalid", "environment variable " + name + ": " + why,
                   "check how the launcher started the trainer (see docs/distributed.md)");
}

// The integer value of `name`, which must be set.
int intVariable(const Environment& env, const std::string& name) {
  const auto value = env(name);
  if (!value) throw badVariable(name, "not set");
  try {
    std::size_t used = 0;
    const long v = std::stol(*value, &used);
    if (used != value->size() || v < 0 || v > 1'000'000) throw std::invalid_argument(*value);
    return static_cast<int>(v);
  } catch (const std::exception&) {
    throw badVariable(name, "expected a non-negative integer, got \"" + *value + "\"");
  }
}

int intVariableOr(const Environment& env, const std::string& name, int fallback) {
  return env(name) ? intVariable(env, name) : fallback;
}

void checkConsistent(const LaunchInfo& info, const std::string& rank_var,
                     const std::string& size_var, const std::string& local_var,
                     const std::string& local_size_var) {
  if (info.world_size < 1) throw badVariable(size_var, "must be >= 1");
  if (info.rank >= info.world_size) {
    throw badVariable(rank_var, std::to_string(info.rank) + " is not below " + size_var + " " +
                                    std::to_string(info.world_size));
  }
  if (info.local_world_size < 1 || info.local_world_size > info.world_size) {
    throw badVariable(local_size_var, std::to_string(info.local_world_size) + " does not fit " +
                                          size_var + " " + std::to_string(info.world_size));
  }
  if (info.local_rank >= info.local_world_size) {
    throw badVariable(local_var, std::to_string(info.local_rank) + " is not below " +
                                     local_size_var + " " + std::to_string(info.local_world_size));
  }
}

}  // namespace

Environment processEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string firstSlurmHost(const std::string& nodelist) {
  // Hosts are separated by commas outside brackets; a bracket holds ranges of numbers.
  std::string first;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    first += c;
  }
  const auto open = first.find('[');
  if (open == std::string::npos) return first;
  const std::string prefix = first.substr(0, open);
  std::string range = first.substr(open + 1);
  const auto end = range.find_first_of(",-]");
  return prefix + range.substr(0, end);
}

LaunchInfo detectLaunch(const core::DistributedConfig& config, const Environment& env) {
  LaunchInfo info;
  info.master_addr = config.master_addr;
  info.master_port = config.master_port;
  const auto launcher = env("TB_LAUNCHER");
  if (launcher && *launcher == "local") {
    info.launcher = "local";
    info.rank = intVariable(env, "RANK");
    info.world_size = intVariable(env, "WORLD_SIZE");
    info.local_rank = intVariable(env, "LOCAL_RANK");
    info.local_world_size = intVariable(env, "LOCAL_WORLD_SIZE");
    info.node_rank = intVariableOr(env, "GROUP_RANK", 0);
    info.store_served_by_launcher = true;
    if (const auto file = env("TB_STORE_FILE")) info.store_file = *file;
    checkConsistent(info, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  } else if (env("RANK") && env("WORLD_SIZE") && env("LOCAL_RANK")) {
    info.launcher = "torchrun";
    info.rank = intVariable(env, "RANK");
    info.world_size = intVariable(env, "WORLD_SIZE");
    info.local_rank = intVariable(env, "LOCAL_RANK");
    info.local_world_size = intVariableOr(env, "LOCAL_WORLD_SIZE", info.world_size);
    info.node_rank = intVariableOr(env, "GROUP_RANK", info.rank / info.local_world_size);
    const auto agent = env("TORCHELASTIC_USE_AGENT_STORE");
    info.store_served_by_launcher =
        agent && (*agent == "True" || *agent == "true" || *agent == "1");
    checkConsistent(info, "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE");
  } else if (env("OMPI_COMM_WORLD_RANK")) {
    info.launcher = "mpirun";
    info.rank = intVariable(env, "OMPI_COMM_WORLD_RANK");
    info.world_size = intVariable(env, "OMPI_COMM_WORLD_SIZE");
    info.local_rank = intVariableOr(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
    info.local_world_size = intVariableOr(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1);
    info.node_rank = info.rank / info.local_world_size;
    checkConsistent(info, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE");
  } else if (env("SLURM_PROCID") && (env("SLURM_STEP_ID") || env("SLURM_STEPID"))) {
    info.launcher = "slurm";
    info.rank = intVariable(env, "SLURM_PROCID");
    const std::string size_var =
        env("SLURM_STEP_NUM_TASKS") ? "SLURM_STEP_NUM_TASKS" : "SLURM_NTASKS";
    info.world_size = intVariable(env, size_var);
    info.local_rank = intVariableOr(env, "SLURM_LOCALID", 0);
    info.node_rank = intVariableOr(env, "SLURM_NODEID", 0);
    // Tasks per node: "4" or "4(x2),3"; the first figure is this layout's block size.
    int per_node = info.world_size;
    if (const auto tasks = env("SLURM_STEP_TASKS_PER_NODE") ? env("SLURM_STEP_TASKS_PER_NODE")
                                                            : env("SLURM_TASKS_PER_NODE")) {
      try {
        per_node = std::stoi(*tasks);
      } catch (const std::exception&) {
        throw badVariable("SLURM_TASKS_PER_NODE",
                          "expected a count such as 4 or 4(x2), got \"" + *tasks + "\"");
      }
    }
    info.local_world_size = std::min(per_node, info.world_size);
    checkConsistent(info, "SLURM_PROCID", size_var, "SLURM_LOCALID", "SLURM_TASKS_PER_NODE");
    for (const char* list : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      if (const auto nodes = env(list); nodes && !nodes->empty()) {
        info.master_addr = firstSlurmHost(*nodes);
        break;
      }
    }
  } else {
    return info;  // single
  }
  if (const auto addr = env("MASTER_ADDR"); addr && !addr->empty()) info.master_addr = *addr;
  if (env("MASTER_PORT")) {
    info.master_port = intVariable(env, "MASTER_PORT");
    if (info.master_port < 1 || info.master_port > 65535)
      throw badVariable("MASTER_PORT", "must be 1..65535");
  }
  return info;
}

bool namesLoopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

std::string describe(const LaunchInfo& info) {
  if (!info.distributed()) return "one process (" + info.launcher + ")";
  return "rank " + std::to_string(info.rank) + " of " + std::to_string(info.world_size) + " (" +
         info.launcher + ", node " + std::to_string(info.node_rank) + ", local rank " +
         std::to_string(info.local_rank) + " of " + std::to_string(info.local_world_size) +
         "), store " +
         (info.store_file.empty() ? info.master_addr + ":" + std::to_string(info.master_port)
                                  : info.store_file);
}

}  // namespace tb::trainer::distributed
