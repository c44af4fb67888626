#pragma once

#include <QString>

namespace tb::app {

/// Where the `tokenbench-trainer` executable is, and how it was found.
///
/// Search order: `--trainer PATH`, then `$TOKENBENCH_TRAINER`, then beside `tokenbench` (the
/// build tree), then the installed layout (`<bindir>/../libexec/tokenbench`). An explicit
/// choice (option or variable) that is not an executable file is reported, never silently
/// replaced by another trainer.
struct TrainerLocation {
  /// Name of the environment variable that names the trainer.
  static constexpr const char* kEnvironmentVariable = "TOKENBENCH_TRAINER";
  /// File name of the trainer executable.
  static constexpr const char* kExecutableName = "tokenbench-trainer";

  QString path;     ///< Absolute path of the trainer; empty when not found.
  QString origin;   ///< Where the path came from: "--trainer", "TOKENBENCH_TRAINER", ...
  QString problem;  ///< Why no trainer was found; empty when found.
  bool explicitChoiceInvalid = false;  ///< True when --trainer named something unusable.

  bool found() const { return !path.isEmpty(); }

  /// Searches as described above. `overridePath` is --trainer ("" if not given),
  /// `environmentValue` is $TOKENBENCH_TRAINER ("" if unset), `applicationDir` is the
  /// directory that holds the running `tokenbench`.
  static TrainerLocation find(const QString& overridePath, const QString& environmentValue,
                              const QString& applicationDir);

  /// find() with $TOKENBENCH_TRAINER read from the environment.
  static TrainerLocation findFromEnvironment(const QString& overridePath,
                                             const QString& applicationDir);
};

}  // namespace tb::app
