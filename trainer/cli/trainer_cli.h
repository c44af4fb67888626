#pragma once
// The tokenbench-trainer command line. Exit codes: 0 success, 1 a failure while running,
// 2 a usage or configuration error (message on stderr). stdout carries only what a command is
// for (JSON, NDJSON events, names); diagnostics go to stderr.

namespace tb::trainer {

int runTrainerCli(int argc, char** argv);

}  // namespace tb::trainer
