#pragma once

#include <iosfwd>
#include <string>

namespace tb::app {

/// `tokenbench --no-gui`: trains (or resumes) one run without a window, for cluster nodes.
///
/// Needs only a QCoreApplication. This version checks its inputs and then says plainly that
/// headless training is not available yet: the trainer loop it will drive is not built. It
/// never pretends to have run anything.
class HeadlessRunner {
 public:
  /// What the run needs, from the command line.
  struct Inputs {
    std::string configPath;  ///< --config FILE; may be empty only with resume.
    std::string runDir;      ///< --run-dir DIR; required.
    bool resume = false;     ///< --resume: continue the run in runDir.
  };

  explicit HeadlessRunner(Inputs inputs);

  /// Checks the inputs against each other and the file system. Returns "" when they are
  /// usable, else one line that names the offending option.
  std::string validate() const;

  /// Validates, then runs. Messages go to `err` (the human log); `out` is reserved for
  /// machine-readable output. Returns the process exit status.
  int run(std::ostream& out, std::ostream& err) const;

  const Inputs& inputs() const { return m_inputs; }

 private:
  Inputs m_inputs;
};

}  // namespace tb::app
