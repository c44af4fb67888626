#pragma once

namespace tb::app {

/// Exit statuses of `tokenbench`.
enum class ExitCode : int {
  Ok = 0,       ///< Finished what was asked.
  Failure = 1,  ///< Ran, but the work failed (a training run that failed, for example).
  Usage = 2,    ///< Nothing was done: bad options, missing files, or a mode this build lacks.
};

/// The status as `main` returns it.
constexpr int toInt(ExitCode code) { return static_cast<int>(code); }

}  // namespace tb::app
