#pragma once
// The sentences a person reads about a trainer run: its status ("running, step 120/1000",
// "crashed (SIGSEGV) at step 120"), the names of its states and signals, and the problems met
// while reading its output.
//
// Why app/text: both front ends say these words, the window (app/gui) and `tokenbench --no-gui`
// (the headless runner, which lives in app/control because it needs QtCore only). The words sit
// in a room below both, QtCore only, that knows the run as plain data (RunStatus) and nothing of
// the process that produced it; RunController keeps state and says nothing itself.

#include "app/text/run_status.h"

#include <QString>

#include <cstddef>
#include <string>

namespace tb::app {

/// One line for a person: "running, step 120/1000, ETA 4m18s", "crashed (SIGSEGV) at step 120",
/// "failed at step 30: data.path is not a folder", "unresponsive: no output for 5m00s".
QString describeRun(const RunStatus& status);

/// Short lower-case name of a state: "running", "exited with error", ...
QString runStateName(RunStatus::State state);

/// Name of a signal: "SIGSEGV", or "signal 42".
QString signalName(int signal);

/// A stdout line that is not an event: "ignored a stdout line that is not an event (<reason>)".
QString ignoredLineText(const std::string& reason);

/// A sample or checkpoint (`what`) whose path lies outside the run directory.
QString ignoredPathText(const char* what, const std::string& path);

/// What stands in the stderr tail for a line longer than `maxBytes`.
QString droppedStderrLineText(std::size_t maxBytes);

}  // namespace tb::app
