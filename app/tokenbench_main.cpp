#include "app/tokenbench_main.h"

#include "app/control/command_line.h"
#include "app/control/compare_request.h"
#include "app/control/exit_code.h"
#include "app/control/headless_runner.h"
#include "app/control/trainer_location.h"
#include "core/version.h"
#if TB_HAS_GUI
#include "app/gui/gui_runner.h"
#endif

#include <QCoreApplication>
#include <QString>

#include <iostream>

namespace tb::app {
namespace {

void setApplicationIdentity() {
  QCoreApplication::setOrganizationName(QStringLiteral("Tokenbench"));
  QCoreApplication::setApplicationName(QStringLiteral("tokenbench"));
  QCoreApplication::setApplicationVersion(QString::fromStdString(core::versionString()));
}

int printVersion(int& argc, char** argv, const CommandLineOptions& options) {
  const QCoreApplication app(argc, argv);  // for applicationDirPath(); loads no plugin
  std::cout << "tokenbench " << core::versionString() << '\n';
  const TrainerLocation trainer = TrainerLocation::findFromEnvironment(
      QString::fromStdString(options.trainerPath), QCoreApplication::applicationDirPath());
  if (trainer.found()) {
    std::cout << "trainer: " << trainer.path.toStdString() << '\n';
  } else {
    std::cout << "trainer: not found (" << trainer.problem.toStdString() << ")\n";
  }
  return toInt(ExitCode::Ok);
}

// What --compare asks for (CommandLine checked each NAME=PATH).
CompareRequest compareRequest(const CommandLineOptions& options, const QString& trainer) {
  return CompareRequest{trainer, options.compareCommand};
}

int runHeadless(int& argc, char** argv, const CommandLineOptions& options) {
  QCoreApplication app(argc, argv);
  const TrainerLocation trainer = TrainerLocation::findFromEnvironment(
      QString::fromStdString(options.trainerPath), QCoreApplication::applicationDirPath());
  if (trainer.explicitChoiceInvalid) {
    std::cerr << "tokenbench: " << trainer.problem.toStdString() << '\n';
    return toInt(ExitCode::Usage);
  }
  if (options.compare) {
    if (!trainer.found()) {
      std::cerr << "tokenbench: " << trainer.problem.toStdString() << '\n';
      return toInt(ExitCode::Usage);
    }
    return HeadlessRunner::runCompare(compareRequest(options, trainer.path), std::cerr);
  }
  HeadlessRunner runner({options.configPath, options.runDir, options.resume, options.timeBudget});
  if (const std::string problem = runner.validate(); !problem.empty()) {
    std::cerr << "tokenbench: " << problem << '\n';
    return toInt(ExitCode::Usage);
  }
  if (!trainer.found()) {
    std::cerr << "tokenbench: " << trainer.problem.toStdString() << '\n';
    return toInt(ExitCode::Usage);
  }
  return runner.run(trainer.path, std::cout, std::cerr);
}

}  // namespace

int tokenbenchMain(int& argc, char** argv) {
  const CommandLine::Result parsed = CommandLine::parse(argc, argv);
  if (!parsed.ok()) {
    std::cerr << "tokenbench: " << parsed.error << "\n\n" << CommandLine::usage();
    return toInt(ExitCode::Usage);
  }
  const CommandLineOptions& options = parsed.options;
  if (options.help) {
    std::cout << CommandLine::usage();
    return toInt(ExitCode::Ok);
  }
  setApplicationIdentity();
  if (options.version) {
    return printVersion(argc, argv, options);
  }
  if (options.noGui) {
    return runHeadless(argc, argv, options);
  }
#if TB_HAS_GUI
  return GuiRunner(options).run(argc, argv);
#else
  std::cerr << "tokenbench: this build has no window; use --no-gui\n";
  return toInt(ExitCode::Usage);
#endif
}

}  // namespace tb::app
