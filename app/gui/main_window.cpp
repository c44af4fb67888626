#include "app/gui/main_window.h"

#include "app/control/run_summary_reader.h"
#include "app/control/trainer_location.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/compare_page.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/pages/samples_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/user_guide_dialog.h"
#include "app/gui/window_settings.h"
#include "core/checkpoint_files.h"
#include "core/version.h"
#include "widgets/wheel_filter.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFrame>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStatusBar>
#include <QVBoxLayout>

namespace tb::app {
namespace {

constexpr int kNavigationWidth = 160;
constexpr int kStatusMessageMs = 8000;

QString toQString(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<int>(text.size()));
}

int indexOf(PageId page) { return static_cast<int>(page); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Tokenbench"));
  // The wheel scrolls the page under it; an input changes only once clicked or tabbed into.
  QApplication::instance()->installEventFilter(new widgets::UnfocusedWheelFilter(this));
  createPages();
  createMenus();
  createStatusBar();
  resize(kDefaultWidth, kDefaultHeight);
  setCurrentPage(PageId::Setup);
}

MainWindow::~MainWindow() = default;

void MainWindow::createPages() {
  m_setupPage = new SetupPage;
  m_monitorPage = new MonitorPage;
  m_samplesPage = new SamplesPage;
  m_comparePage = new ComparePage;
  m_runsPage = new RunsPage;

  m_pages = new QStackedWidget;
  m_pages->setObjectName(QStringLiteral("pages"));
  m_navigation = new QListWidget;
  m_navigation->setObjectName(QStringLiteral("navigation"));
  m_navigation->setFixedWidth(kNavigationWidth);
  m_navigation->setFrameShape(QFrame::NoFrame);
  m_navigation->setSpacing(2);
  m_navigation->setStyleSheet(
      QStringLiteral("QListWidget#navigation { background: palette(window); padding: 12px 8px;"
                     " outline: 0; }"
                     "QListWidget#navigation::item { padding: 7px 10px; border-radius: 4px; }"
                     "QListWidget#navigation::item:selected { background: palette(highlight);"
                     " color: palette(highlighted-text); }"));

  // Stack index == navigation row == PageId, in kAllPages order.
  for (PageId page : kAllPages) {
    QWidget* widget = pageWidget(page);
    widget->setObjectName(toQString(pageName(page)) + QStringLiteral("Page"));
    m_pages->addWidget(widget);
    auto* item = new QListWidgetItem(toQString(pageTitle(page)), m_navigation);
    item->setData(Qt::UserRole, toQString(pageName(page)));
  }
  connect(m_navigation, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);

  auto* separator = new QFrame;
  separator->setFrameShape(QFrame::VLine);
  separator->setFrameShadow(QFrame::Sunken);

  auto* central = new QWidget;
  auto* layout = new QHBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(m_navigation);
  layout->addWidget(separator);
  // The run-control bar sits above whichever page is shown.
  auto* pageArea = new QWidget;
  auto* pageLayout = new QVBoxLayout(pageArea);
  pageLayout->setContentsMargins(0, 0, 0, 0);
  pageLayout->setSpacing(0);
  pageLayout->addWidget(createRunControl());
  pageLayout->addWidget(m_pages, 1);
  // Details open below the page: above it they would push the page down under the mouse.
  auto* details = new QWidget;
  details->setObjectName(QStringLiteral("runDetailsArea"));
  auto* detailsLayout = new QVBoxLayout(details);
  detailsLayout->setContentsMargins(24, 0, 24, 8);
  detailsLayout->addWidget(m_runControlBar->takeDetailsView());
  pageLayout->addWidget(details);
  layout->addWidget(pageArea, 1);
  setCentralWidget(central);
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open =
      file->addAction(tr("&Open Run Directory\u2026"), this, &MainWindow::chooseRunDirectory);
  open->setObjectName(QStringLiteral("openRunDirectoryAction"));
  open->setShortcut(QKeySequence::Open);
  m_recentMenu = file->addMenu(tr("Open &Recent"));
  m_recentMenu->setObjectName(QStringLiteral("recentRunsMenu"));
  connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
  fillRecentMenu();
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setObjectName(QStringLiteral("quitAction"));
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);
  createRunMenu(menuBar());

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (PageId page : kAllPages) {
    const int number = indexOf(page) + 1;
    QAction* show =
        view->addAction(toQString(pageTitle(page)), this, [this, page] { setCurrentPage(page); });
    show->setObjectName(QStringLiteral("show%1Action").arg(toQString(pageTitle(page))));
    show->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_0 + number)));
  }

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* guide = help->addAction(tr("&User Guide"), this, &MainWindow::showUserGuide);
  guide->setObjectName(QStringLiteral("userGuideAction"));
  guide->setShortcut(QKeySequence::HelpContents);
  QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this, &MainWindow::showShortcuts);
  keys->setObjectName(QStringLiteral("shortcutsAction"));
  help->addSeparator();
  QAction* about = help->addAction(tr("&About Tokenbench"), this, &MainWindow::showAbout);
  about->setObjectName(QStringLiteral("aboutAction"));
  about->setMenuRole(QAction::AboutRole);
}

void MainWindow::createStatusBar() {
  m_trainerStatus = new QLabel;
  m_trainerStatus->setObjectName(QStringLiteral("trainerStatus"));
  statusBar()->addPermanentWidget(m_trainerStatus);
  setTrainerLocation(TrainerLocation{});
  statusBar()->showMessage(tr("Ready"));
}

void MainWindow::setCurrentPage(PageId page) { m_navigation->setCurrentRow(indexOf(page)); }

PageId MainWindow::currentPage() const {
  return kAllPages[static_cast<size_t>(qMax(0, m_pages->currentIndex()))];
}

QWidget* MainWindow::pageWidget(PageId page) const {
  switch (page) {
    case PageId::Setup:
      return m_setupPage;
    case PageId::Monitor:
      return m_monitorPage;
    case PageId::Samples:
      return m_samplesPage;
    case PageId::Compare:
      return m_comparePage;
    case PageId::Runs:
      return m_runsPage;
  }
  return nullptr;
}

void MainWindow::setTrainerLocation(const TrainerLocation& trainer) {
  m_setupPage->setTrainerLocation(trainer);
  m_comparePage->setTrainerPath(trainer.path);
  m_runControlBar->setTrainer(trainer.path, trainer.problem);
  if (trainer.found()) {
    m_trainerStatus->setText(tr("Trainer: %1").arg(QFileInfo(trainer.path).fileName()));
    m_trainerStatus->setToolTip(QDir::toNativeSeparators(trainer.path));
  } else if (!trainer.problem.isEmpty()) {
    m_trainerStatus->setText(tr("Trainer: not found"));
    m_trainerStatus->setToolTip(trainer.problem);
  } else {
    m_trainerStatus->setText(tr("Trainer: not searched"));
    m_trainerStatus->setToolTip({});
  }
}

void MainWindow::setConfigPath(const QString& path) {
  m_setupPage->setConfigPath(path.isEmpty() ? path : QFileInfo(path).absoluteFilePath());
}

MainWindow::FolderCheck MainWindow::checkFolder(const QString& path) {
  FolderCheck check;
  const QFileInfo info(path);
  if (path.isEmpty() || !info.isDir()) return check;
  check.absolute = QDir::cleanPath(info.absoluteFilePath());
  if (RunSummaryReader::isRunDirectory(check.absolute)) {
    check.kind = FolderCheck::Run;
    return check;
  }
  check.runs = static_cast<int>(RunSummaryReader::runDirectoriesIn(check.absolute).size());
  const QString weights =
      pathText(runDirectoryAt(check.absolute).root() / core::checkpoint_files::kModel);
  if (check.runs > 0)
    check.kind = FolderCheck::FolderOfRuns;
  else if (QFileInfo::exists(weights))
    check.kind = FolderCheck::Checkpoint;
  else
    check.kind = FolderCheck::Other;
  return check;
}

bool MainWindow::openRunDirectory(const QString& path) {
  return openCheckedFolder(path, checkFolder(path));
}

void MainWindow::openRunDirectoryLater(const QString& path, std::function<void(bool)> done) {
  m_folderReads.read([path] { return checkFolder(path); },
                     [this, path, done = std::move(done)](const FolderCheck& check) {
                       const bool opened = openCheckedFolder(path, check);
                       if (done) done(opened);
                     });
}

bool MainWindow::waitForReads(int timeoutMs) { return m_folderReads.waitForReads(timeoutMs); }

bool MainWindow::openCheckedFolder(const QString& path, const FolderCheck& check) {
  m_openProblem.clear();
  const QString shown = QDir::toNativeSeparators(check.absolute);
  switch (check.kind) {
    case FolderCheck::Run:
      showRun(check.absolute);
      return true;
    case FolderCheck::FolderOfRuns:
      // A folder of runs, as TensorBoard's --logdir: list them, and let the user pick one.
      m_runsPage->setFolder(check.absolute);
      setCurrentPage(PageId::Runs);
      statusBar()->showMessage(
          check.runs == 1
              ? tr("%1 holds 1 run: double-click it to open it").arg(shown)
              : tr("%1 holds %2 runs: double-click one to open it").arg(shown).arg(check.runs),
          kStatusMessageMs);
      return false;
    case FolderCheck::Missing:
      m_openProblem = tr("Not a directory: %1").arg(path);
      break;
    case FolderCheck::Checkpoint:
      m_openProblem = tr("%1 is a checkpoint folder, not a run directory. Compare it on the "
                         "Compare page (Add Folder…), or open the run that wrote it.")
                          .arg(shown);
      break;
    case FolderCheck::Other:
      m_openProblem = tr("%1 is not a run directory: a run directory holds the config.json a "
                         "training run writes, and this folder has none (nor any run directory "
                         "inside).")
                          .arg(shown);
      break;
  }
  statusBar()->showMessage(m_openProblem, kStatusMessageMs);
  return false;
}

void MainWindow::showRun(const QString& absolute) {
  const QString shown = QDir::toNativeSeparators(absolute);
  m_runsPage->addRunDirectory(absolute);
  m_runsPage->setCurrentRun(absolute);
  m_openRunDirectory = absolute;
  WindowSettings().addRecentRun(absolute);
  // Setup keeps its runs folder: opening a run must not change where the next run goes.
  m_monitorPage->setRunDirectory(absolute);
  m_samplesPage->setRunDirectory(absolute);
  m_comparePage->setOpenRun(absolute);
  m_runControlBar->openRunChanged();
  setWindowTitle(tr("%1 \u2014 Tokenbench").arg(QFileInfo(absolute).fileName()));
  statusBar()->showMessage(tr("Opened %1").arg(shown), kStatusMessageMs);
  Q_EMIT runDirectoryOpened(absolute);
}

bool MainWindow::newRunFromConfiguration(const QString& configPath) {
  if (!m_setupPage->confirmDiscardEdits(tr("New Run from a Configuration"))) return false;
  const bool loaded = m_setupPage->loadConfigFile(configPath);
  setCurrentPage(PageId::Setup);
  return loaded;
}

void MainWindow::overlayRuns(const QStringList& paths) {
  int added = 0;
  for (const QString& path : paths) added += m_monitorPage->addOverlayRun(path) ? 1 : 0;
  setCurrentPage(PageId::Monitor);
  statusBar()->showMessage(added == 1 ? tr("Overlaid 1 run on the Monitor")
                                      : tr("Overlaid %1 runs on the Monitor").arg(added),
                           kStatusMessageMs);
}

bool MainWindow::restoreWindowState() {
  const WindowSettings settings;
  const QByteArray geometry = settings.geometry();
  const bool restored = !geometry.isEmpty() && restoreGeometry(geometry);
  restoreState(settings.windowState());
  if (const std::optional<PageId> page = settings.lastPage()) {
    setCurrentPage(*page);
  }
  return restored;
}

void MainWindow::saveWindowState() const {
  WindowSettings settings;
  settings.setGeometry(saveGeometry());
  settings.setWindowState(saveState());
  settings.setLastPage(currentPage());
  settings.sync();
}

void MainWindow::setRemembersWindowState(bool remember) { m_remembersWindowState = remember; }

QString MainWindow::aboutText() {
  return tr("<h3>Tokenbench %1</h3>"
            "<p>A workbench for training and inspecting visual tokenizers "
            "(MAGVIT-v2, VQGAN).</p>"
            "<p>Event protocol version %2, configuration schema version %3.</p>"
            "<p>Tokenbench is free software, licensed under the GNU General Public License, "
            "version 3 or later.</p>")
      .arg(QString::fromStdString(core::versionString()))
      .arg(core::kProtocolVersion)
      .arg(core::kConfigSchemaVersion);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (!confirmCloseWithRun()) {
    event->ignore();
    return;
  }
  if (m_remembersWindowState) {
    saveWindowState();
  }
  event->accept();
}

void MainWindow::chooseRunDirectory() {
  const QString start =
      QFileInfo(m_runsPage->folder()).isDir() ? m_runsPage->folder() : QDir::currentPath();
  const QString path = QFileDialog::getExistingDirectory(this, tr("Open Run Directory"), start);
  if (path.isEmpty()) return;
  openRunDirectoryLater(path, [this](bool opened) {
    if (opened) {
      setCurrentPage(PageId::Monitor);  // the run just opened, not another configuration
    } else if (!m_openProblem.isEmpty()) {
      QMessageBox::warning(this, tr("Open Run Directory"), m_openProblem);
    }
  });
}

void MainWindow::showAbout() { QMessageBox::about(this, tr("About Tokenbench"), aboutText()); }

QString MainWindow::userGuidePath() {
  // Installed: <prefix>/share/doc/tokenbench beside <prefix>/bin; a build tree: the sources.
  const QStringList candidates = {
      QDir(QCoreApplication::applicationDirPath())
          .filePath(QStringLiteral(TB_DOC_RELATIVE_DIR "/user-guide.md")),
      QStringLiteral(TB_SOURCE_DOCS_DIR "/user-guide.md")};
  for (const QString& candidate : candidates) {
    if (QFileInfo(candidate).isFile()) return QDir::cleanPath(candidate);
  }
  return {};
}

void MainWindow::showUserGuide() {
  // One guide window, kept beside the main window (not modal: the user reads while working).
  if (m_userGuide == nullptr) m_userGuide = new UserGuideDialog(userGuidePath(), this);
  m_userGuide->show();
  m_userGuide->raise();
  m_userGuide->activateWindow();
}

void MainWindow::showShortcuts() {
  QStringList rows;
  for (QAction* action : findChildren<QAction*>()) {
    if (action->shortcut().isEmpty() || action->text().isEmpty()) continue;
    rows << QStringLiteral("<tr><td><b>%1</b></td><td>&nbsp;&nbsp;%2</td></tr>")
                .arg(action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                     QString(action->text()).remove(QLatin1Char('&')).toHtmlEscaped());
  }
  rows.sort();
  QMessageBox box(QMessageBox::NoIcon, tr("Keyboard Shortcuts"),
                  QStringLiteral("<table>%1</table><p>%2</p>")
                      .arg(rows.join(QString()),
                           tr("On Samples and Compare: Space plays or pauses, comma and period "
                              "step a frame. Ctrl+wheel zooms a plot.")),
                  QMessageBox::Close, this);
  box.setObjectName(QStringLiteral("shortcutsBox"));
  box.exec();
}

}  // namespace tb::app
