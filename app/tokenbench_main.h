#pragma once

namespace tb::app {

/// The whole `tokenbench` program; `main` only forwards to it.
///
/// Parses the command line before any Qt application object exists, then: --help and bad
/// usage need none; --version and --no-gui create only a QCoreApplication (no platform
/// plugin, no display); everything else opens the window (QApplication). `argc` must outlive
/// the call, as QCoreApplication requires. Returns the exit status (see ExitCode).
int tokenbenchMain(int& argc, char** argv);

}  // namespace tb::app
