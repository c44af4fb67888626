#pragma once

#include "app/control/command_line.h"

#include <string>

namespace tb::app {

class MainWindow;

/// The window path of `tokenbench`: creates the QApplication and the MainWindow, applies the
/// command line (--config, --run-dir, --page, --trainer) and runs the event loop; with
/// --screenshot it renders the window to a PNG instead and exits.
class GuiRunner {
 public:
  explicit GuiRunner(CommandLineOptions options);

  /// Runs until the window closes. `argc` must outlive the call (QApplication keeps it).
  /// Returns 0, or 2 for bad paths on the command line or a screenshot that cannot be written.
  int run(int& argc, char** argv);

 private:
  /// "" when the paths named on the command line are usable, else a message naming the option.
  std::string checkPaths() const;
  int saveScreenshot(MainWindow& window) const;

  CommandLineOptions m_options;
};

}  // namespace tb::app
