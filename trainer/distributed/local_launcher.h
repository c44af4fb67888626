#pragma once
// The trainer's own launcher, for distributed.nproc_per_node > 1 without an outside launcher
// (torchrun, srun, mpirun): like torchrun, it provides the c10d store (on one node a FileStore in
// a folder only this user may enter, so nothing listens on the network; on several, a store on
// master_addr:master_port served by node 0 and listening on that address only), starts this node's
// ranks as child processes of the same executable, and supervises them.
//
// - Rank 0's events are relayed on stdout; its `error` and `done` are held until every rank has
//   ended, so a run where a rank died ends with one error that names the rank and what happened
//   ("rank 1 (pid 4242) was killed by signal 9 (SIGKILL)"), never a rank this launcher ended.
// - A rank stopped (SIGSTOP) for distributed.timeout_s is killed and named as the cause.
// - Control lines on stdin go to every rank (each rank's stop request is agreed by all at the
//   same step); SIGINT/SIGTERM are passed on as SIGTERM (a graceful stop); when the launcher
//   dies, its ranks get SIGTERM (PR_SET_PDEATHSIG) and stop with a checkpoint.
// - Once a rank has failed, the others get distributed.timeout_s to end on their own, then
//   SIGTERM, then SIGKILL: never a hang.

#include "core/run_config.h"
#include "core/run_directory.h"

#include <string>
#include <vector>

namespace tb::trainer::distributed {

struct LocalLaunch {
  std::vector<std::string> arguments;  ///< the trainer's own argv[1..], passed to every rank
  core::RunConfig config;
  core::RunDirectory run{""};
  bool control_stdin = false;
};

/// Runs the ranks of this node to the end; returns the exit status (0: every rank finished and
/// rank 0 said done; 1: a rank failed; 2: rank 0 refused to start, e.g. a locked run directory).
int runLocalLaunch(const LocalLaunch& launch);

}  // namespace tb::trainer::distributed
