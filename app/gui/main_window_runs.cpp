// MainWindow, run control: the bar above the pages, the Run menu, File > Open Recent, and what
// Launch and Resume start (split from main_window.cpp by concern, as OBS splits OBSBasic).
#include "app/gui/main_window.h"

#include "app/control/run_controller.h"
#include "app/control/run_summary_reader.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/pages/samples_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/window_settings.h"
#include "app/text/run_status_text.h"

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QFrame>
#include <QKeySequence>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QVBoxLayout>

namespace tb::app {
namespace {

constexpr int kStatusMessageMs = 8000;

}  // namespace

QWidget* MainWindow::createRunControl() {
  m_runController = new RunController(this);
  m_runControlBar = new RunControlBar(m_runController);
  m_runControlBar->setPlanner([this] { return launchPlan(); });
  m_runControlBar->setProblemsProvider([this] { return m_setupPage->validationErrors(); });
  connect(m_setupPage, &SetupPage::configChanged, m_runControlBar, &RunControlBar::settingsChanged);
  // Resume continues the run the window has open (the Setup page's target is a new run).
  m_runControlBar->setResumeDirectoryProvider([this] { return m_openRunDirectory; });
  connect(m_runControlBar, &RunControlBar::runDirectoryReady, this,
          &MainWindow::onRunDirectoryReady);
  connect(m_runController, &RunController::finished, this, [this] {
    statusBar()->showMessage(tr("Run %1").arg(describeRun(m_runController->status())),
                             kStatusMessageMs);
    m_monitorPage->pollNow();  // the Monitor tells at once that no trainer runs any more
  });
  // Cues from the launched run's stream; the pages read what they show from its files.
  connect(m_runController, &RunController::sampleReceived, m_samplesPage, &SamplesPage::rescan);
  connect(m_runController, &RunController::checkpointReceived, this,
          [this](const core::CheckpointEvent& event) {
            statusBar()->showMessage(
                tr("Checkpoint written at step %1").arg(QLocale().toString(event.step)),
                kStatusMessageMs);
          });
  // Opened from the browser: watch it (TensorBoard and W&B open a run on its charts).
  connect(m_runsPage, &RunsPage::openRequested, this, [this](const QString& path) {
    openRunDirectoryLater(path, [this](bool opened) {
      if (opened) setCurrentPage(PageId::Monitor);
    });
  });
  connect(m_runsPage, &RunsPage::overlayRequested, this, &MainWindow::overlayRuns);
  connect(m_monitorPage, &MonitorPage::newRunFromConfigurationRequested, this,
          &MainWindow::newRunFromConfiguration);

  auto* area = new QWidget;
  area->setObjectName(QStringLiteral("runControlArea"));
  auto* layout = new QVBoxLayout(area);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(m_runControlBar);
  auto* line = new QFrame;
  line->setFrameShape(QFrame::HLine);
  line->setFrameShadow(QFrame::Sunken);
  layout->addWidget(line);
  return area;
}

void MainWindow::createRunMenu(QMenuBar* bar) {
  QMenu* run = bar->addMenu(tr("&Run"));
  QAction* launch = run->addAction(m_runControlBar->launchButton()->icon(), tr("&Launch"),
                                   m_runControlBar, [this] { m_runControlBar->launch(); });
  launch->setObjectName(QStringLiteral("launchAction"));
  launch->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
  QAction* stop = run->addAction(m_runControlBar->stopButton()->icon(), tr("&Stop"),
                                 m_runControlBar, &RunControlBar::stop);
  stop->setObjectName(QStringLiteral("stopAction"));
  stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
  // Resume and Checkpoint check what the bar allows now: their shortcuts work with the menu
  // closed, when aboutToShow has not updated them.
  QAction* resume = run->addAction(m_runControlBar->resumeButton()->icon(), tr("&Resume"),
                                   m_runControlBar, [this] {
                                     if (m_runControlBar->resumeButton()->isEnabled())
                                       m_runControlBar->resume();
                                   });
  resume->setObjectName(QStringLiteral("resumeAction"));
  resume->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  QAction* checkpoint = run->addAction(tr("Write &Checkpoint Now"), m_runController, [this] {
    if (m_runControlBar->checkpointButton()->isEnabled()) m_runController->requestCheckpoint();
  });
  checkpoint->setObjectName(QStringLiteral("checkpointAction"));
  checkpoint->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
  // The menu offers what the bar's buttons offer, no more.
  connect(run, &QMenu::aboutToShow, this, [this, launch, stop, resume, checkpoint] {
    launch->setEnabled(m_runControlBar->launchButton()->isEnabled());
    stop->setEnabled(m_runControlBar->stopButton()->isEnabled());
    stop->setText(m_runControlBar->stopButton()->text());
    resume->setEnabled(m_runControlBar->resumeButton()->isEnabled());
    checkpoint->setEnabled(m_runControlBar->checkpointButton()->isEnabled());
  });
  // Closed, the menu must not keep a shortcut disabled that the bar has since allowed.
  connect(run, &QMenu::aboutToHide, this, [launch, stop, resume, checkpoint] {
    for (QAction* action : {launch, stop, resume, checkpoint}) action->setEnabled(true);
  });
}

void MainWindow::fillRecentMenu() {
  m_recentMenu->clear();
  const QStringList recent = WindowSettings().recentRuns();
  for (const QString& path : recent) {
    QAction* action = m_recentMenu->addAction(QDir::toNativeSeparators(path), this, [this, path] {
      openRunDirectoryLater(path, [this](bool opened) {
        if (opened) setCurrentPage(PageId::Monitor);
      });
    });
    action->setData(path);
  }
  // Runs that are gone (or no longer runs) are greyed out once a read off the window's thread
  // says so; opening one meanwhile is refused as any folder that is not a run.
  m_folderReads.read(
      [recent] {
        QStringList gone;
        for (const QString& path : recent) {
          if (!RunSummaryReader::isRunDirectory(path)) gone << path;
        }
        return gone;
      },
      [this](const QStringList& gone) {
        for (QAction* action : m_recentMenu->actions()) {
          if (gone.contains(action->data().toString())) action->setEnabled(false);
        }
      });
  if (recent.isEmpty()) {
    m_recentMenu->addAction(tr("No recent runs"))->setEnabled(false);
    return;
  }
  m_recentMenu->addSeparator();
  m_recentMenu->addAction(tr("&Clear Recent Runs"), this,
                          [] { WindowSettings().clearRecentRuns(); });
}

LaunchPlan MainWindow::launchPlan() const {
  LaunchPlan plan;
  plan.request = m_setupPage->launchRequest();
  plan.problems = m_setupPage->validationErrors();
  if (plan.problems.isEmpty()) {
    // The file the Setup page's command line names: what runs is what the page shows.
    QString error;
    if (!m_setupPage->writeLaunchConfig(&error)) {
      plan.problems << error;
    }
  }
  return plan;
}

void MainWindow::onRunDirectoryReady(const QString& path) {
  // The window's own run: followed from its hello on, before its config.json exists. Setup
  // suggests a fresh name beside it, so that the next Launch does not target this run.
  if (QFileInfo(path).isDir()) {
    const QString absolute = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
    showRun(absolute);
    m_setupPage->setRunDirectory(absolute);
  }
  if (currentPage() == PageId::Setup) {
    setCurrentPage(PageId::Monitor);  // launched from Setup: watch it
  }
}

bool MainWindow::confirmCloseWithRun() {
  if (!m_runController->isActive()) {
    return true;
  }
  QMessageBox box(QMessageBox::Question, tr("Quit Tokenbench"),
                  tr("A run is in progress (%1).").arg(describeRun(m_runController->status())),
                  QMessageBox::Cancel, this);
  box.setObjectName(QStringLiteral("quitWithRunBox"));
  box.setInformativeText(
      tr("Quitting stops it cleanly: the trainer writes a checkpoint, and "
         "Resume continues the run later."));
  QPushButton* stopAndQuit = box.addButton(tr("Stop Run and Quit"), QMessageBox::AcceptRole);
  box.setDefaultButton(QMessageBox::Cancel);
  // The run goes on while the question is open: its step and ETA too.
  const QMetaObject::Connection progress =
      connect(m_runController, &RunController::progressReceived, &box, [this, &box] {
        box.setText(tr("A run is in progress (%1).").arg(describeRun(m_runController->status())));
      });
  const QMetaObject::Connection ended =
      connect(m_runController, &RunController::finished, &box, [this, &box, stopAndQuit] {
        box.setText(tr("The run has ended (%1).").arg(describeRun(m_runController->status())));
        box.setInformativeText(tr("Nothing is left to stop."));
        stopAndQuit->setText(tr("Quit"));
      });
  box.exec();
  disconnect(progress);
  disconnect(ended);
  if (box.clickedButton() != stopAndQuit) {
    return false;
  }
  // The controller's destructor waits for the trainer (stop line, then SIGTERM, then SIGKILL).
  m_runController->stop();
  statusBar()->showMessage(tr("Stopping the run\u2026"));
  return true;
}

}  // namespace tb::app
