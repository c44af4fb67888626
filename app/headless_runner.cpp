#include "app/headless_runner.h"

#include "app/exit_code.h"

#include <filesystem>
#include <ostream>
#include <system_error>
#include <utility>

namespace tb::app {

HeadlessRunner::HeadlessRunner(Inputs inputs) : m_inputs(std::move(inputs)) {}

std::string HeadlessRunner::validate() const {
  namespace fs = std::filesystem;
  if (m_inputs.runDir.empty()) {
    return "--no-gui needs --run-dir DIR (where the run writes its files)";
  }
  if (m_inputs.configPath.empty() && !m_inputs.resume) {
    return "--no-gui needs --config FILE (or --resume to continue the run in --run-dir)";
  }
  std::error_code ec;
  if (!m_inputs.configPath.empty() && !fs::is_regular_file(m_inputs.configPath, ec)) {
    return "--config: no such file: " + m_inputs.configPath;
  }
  if (m_inputs.resume && !fs::is_directory(m_inputs.runDir, ec)) {
    return "--run-dir: no such directory to resume: " + m_inputs.runDir;
  }
  if (!m_inputs.resume && fs::exists(m_inputs.runDir, ec) &&
      !fs::is_directory(m_inputs.runDir, ec)) {
    return "--run-dir: exists and is not a directory: " + m_inputs.runDir;
  }
  return {};
}

int HeadlessRunner::run(std::ostream& /*out*/, std::ostream& err) const {
  if (const std::string problem = validate(); !problem.empty()) {
    err << "tokenbench: " << problem << '\n';
    return toInt(ExitCode::Usage);
  }
  err << "tokenbench: headless training arrives with the trainer loop; nothing was run\n";
  return toInt(ExitCode::Usage);
}

}  // namespace tb::app
