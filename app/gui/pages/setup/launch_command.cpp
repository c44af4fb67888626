// SetupPage: what Launch starts for these settings. The run directory and the --config file
// next to it, the trainer invocation, and the command line shown on the Distributed panel with
// notes on the processes it starts.

#include "app/gui/pages/setup/setup_page.h"

#include "app/control/trainer_location.h"
#include "app/gui/pages/setup/run_destination.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

QString SetupPage::runDirectory() const { return m_destination->runDirectory(); }

QString SetupPage::launchConfigPath() const {
  return QDir::cleanPath(runDirectory() + QStringLiteral(".config.json"));
}

bool SetupPage::writeLaunchConfig(QString* error) {
  const QString path = launchConfigPath();
  if (!QDir().mkpath(QFileInfo(path).path())) {
    if (error != nullptr) *error = tr("cannot create %1").arg(QFileInfo(path).path());
    return false;
  }
  if (!m_config->save(path, error)) return false;
  m_launched = m_config->json();  // kept in that file: leaving these settings loses nothing
  return true;
}

LaunchRequest SetupPage::launchRequest() const {
  LaunchRequest request;
  request.trainer = m_trainerPath;  // empty when none was found
  request.setConfigFile(launchConfigPath());
  request.setRunDir(runDirectory());
  request.command.control_stdin = true;
  return request;
}

QString SetupPage::commandLineText() const {
  LaunchRequest request = launchRequest();
  if (request.trainer.isEmpty())
    request.trainer = QString::fromLatin1(TrainerLocation::kExecutableName);
  return shellCommandLine(request);
}

void SetupPage::refreshCommandLine() {
  if (m_commandLine == nullptr) return;
  m_commandLine->setPlainText(commandLineText());
  const auto intValue = [this](const char* path, int fallback) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_number_integer() ? v.get<int>() : fallback;
  };
  const int nproc = intValue("distributed.nproc_per_node", 1);
  const int nnodes = intValue("distributed.nnodes", 1);
  const Json strategy = value(QStringLiteral("distributed.strategy"));
  const QString strategyName =
      strategy.is_string() ? QString::fromStdString(strategy.get<std::string>()) : QString();
  QStringList notes;
  if (m_trainerPath.isEmpty()) {
    notes << tr(
        "No trainer was found: the command names <i>tokenbench-trainer</i> as it would "
        "be found on PATH.");
  }
  if (strategyName == QLatin1String("none") || nproc * nnodes <= 1) {
    notes << tr("One process trains on this machine.");
  } else {
    notes << tr("The trainer starts %n rank process(es) on this node", nullptr, nproc) +
                 tr(" (%1 in all, %2).").arg(nproc * nnodes).arg(strategyName);
  }
  if (nnodes > 1) {
    notes << tr("With %1 nodes, run the same command on every node with its own "
                "<i>distributed.node_rank</i> (0 \u2026 %2) and the same master address and "
                "port.")
                 .arg(nnodes)
                 .arg(nnodes - 1);
  }
  notes << tr(
      "Under torchrun, Slurm <i>srun</i> or <i>mpirun</i> the trainer takes its rank "
      "from their environment variables instead.");
  m_commandNote->setText(notes.join(QStringLiteral("<br>")));
}

}  // namespace tb::app
