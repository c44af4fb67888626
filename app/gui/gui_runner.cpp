#include "app/gui/gui_runner.h"

#include "app/control/exit_code.h"
#include "app/control/run_summary_reader.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/setup/setup_page.h"
#include "widgets/clip_timeline.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPixmap>
#include <QScreen>
#include <QString>
#include <QTimer>

#include <iostream>
#include <utility>

namespace tb::app {
namespace {

// Time the shown window gets to lay itself out and run queued replots before it is grabbed.
constexpr int kScreenshotSettleMs = 150;
// The Setup page's model-info and data-info answers are waited for this long at most (a first
// scan of a large video folder can take longer; the screenshot then shows it scanning).
constexpr int kScreenshotQueryWaitMs = 30 * 1000;
constexpr int kScreenshotPollMs = 50;
// Room a window manager takes around a window (title bar, borders), in pixels.
constexpr int kFrameAllowance = 48;

bool setupQueriesBusy(const MainWindow& window) {
  const SetupPage* setup = window.setupPage();
  return setup->modelInfoQuery()->isBusy() || setup->dataInfoQuery()->isBusy();
}

}  // namespace

GuiRunner::GuiRunner(CommandLineOptions options) : m_options(std::move(options)) {}

std::string GuiRunner::checkPaths() const {
  if (!m_options.configPath.empty() &&
      !QFileInfo(QString::fromStdString(m_options.configPath)).isFile()) {
    return "--config: no such file: " + m_options.configPath;
  }
  // With --config, a --run-dir that does not exist yet is where Launch writes the new run.
  const QFileInfo runDir(QString::fromStdString(m_options.runDir));
  if (!m_options.runDir.empty() && m_options.configPath.empty() && !runDir.isDir()) {
    return "--run-dir: no such directory: " + m_options.runDir +
           " (to write a new run there, give its configuration with --config FILE)";
  }
  if (!m_options.runDir.empty() && runDir.exists() && !runDir.isDir()) {
    return "--run-dir: not a directory: " + m_options.runDir;
  }
  return {};
}

int GuiRunner::run(int& argc, char** argv) {
  if (const std::string problem = checkPaths(); !problem.empty()) {
    std::cerr << "tokenbench: " << problem << '\n';
    return toInt(ExitCode::Usage);
  }
  QApplication app(argc, argv);
  const TrainerLocation trainer = TrainerLocation::findFromEnvironment(
      QString::fromStdString(m_options.trainerPath), QCoreApplication::applicationDirPath());
  if (trainer.explicitChoiceInvalid) {
    std::cerr << "tokenbench: " << trainer.problem.toStdString() << '\n';
    return toInt(ExitCode::Usage);
  }

  MainWindow window;
  const bool screenshot = !m_options.screenshotPath.empty();
  // A screenshot shows the default window, and leaves the user's remembered one alone.
  window.setRemembersWindowState(!screenshot);
  bool fitScreen = false;
  if (!screenshot && !window.restoreWindowState()) {
    // The default size on a screen smaller than it (1024x640, say): take the whole screen
    // rather than put the window's right and bottom edges out of reach.
    const QScreen* screen = QGuiApplication::primaryScreen();
    fitScreen = screen != nullptr &&
                (screen->availableSize().width() < MainWindow::kDefaultWidth + kFrameAllowance ||
                 screen->availableSize().height() < MainWindow::kDefaultHeight + kFrameAllowance);
  }
  window.setTrainerLocation(trainer);
  if (!m_options.configPath.empty()) {
    window.setConfigPath(QString::fromStdString(m_options.configPath));
  }
  if (!m_options.runDir.empty()) {
    const QString runDir = QString::fromStdString(m_options.runDir);
    if (!m_options.configPath.empty() && !RunSummaryReader::isRunDirectory(runDir)) {
      // --config F --run-dir NEW: the Setup page shows F, and Launch writes the run to NEW.
      window.setupPage()->setRunDirectory(QFileInfo(runDir).absoluteFilePath());
      window.setCurrentPage(PageId::Setup);
    } else if (window.openRunDirectory(runDir)) {
      window.setCurrentPage(PageId::Monitor);  // the run asked for (--page may choose another)
    } else if (!window.lastOpenProblem().isEmpty()) {
      // The window opens anyway (its status bar says it too); a terminal user reads it here.
      std::cerr << "tokenbench: " << window.lastOpenProblem().toStdString() << '\n';
    }
  }
  if (m_options.page) {
    window.setCurrentPage(*m_options.page);
  }
  if (fitScreen) {
    window.showMaximized();
  } else {
    window.show();
  }

  if (screenshot) {
    // Grabbed once laid out and, on the Setup page, once its trainer queries have answered.
    QTimer* poll = new QTimer(&window);
    QElapsedTimer waited;
    waited.start();
    QObject::connect(poll, &QTimer::timeout, &window, [this, &window, poll, waited] {
      const bool waiting = window.currentPage() == PageId::Setup && setupQueriesBusy(window);
      if (waiting && waited.elapsed() < kScreenshotQueryWaitMs) return;
      poll->stop();
      QCoreApplication::exit(saveScreenshot(window));
    });
    QTimer::singleShot(kScreenshotSettleMs, poll, [poll] { poll->start(kScreenshotPollMs); });
  }
  return app.exec();
}

int GuiRunner::saveScreenshot(MainWindow& window) const {
  const QString path = QString::fromStdString(m_options.screenshotPath);
  // Playing clips would be caught at whatever frame the clock reached.
  for (widgets::ClipTimeline* timeline : window.findChildren<widgets::ClipTimeline*>()) {
    timeline->showStill();
  }
  const QPixmap image = window.grab();
  if (image.isNull() || !image.save(path, "PNG")) {
    std::cerr << "tokenbench: --screenshot: cannot write " << m_options.screenshotPath << '\n';
    return toInt(ExitCode::Usage);
  }
  return toInt(ExitCode::Ok);
}

}  // namespace tb::app
