#include "app/main_window.h"

#include "app/pages/compare_page.h"
#include "app/pages/monitor_page.h"
#include "app/pages/runs_page.h"
#include "app/pages/samples_page.h"
#include "app/pages/setup_page.h"
#include "app/run_control_bar.h"
#include "app/trainer_location.h"
#include "app/window_settings.h"
#include "core/version.h"

#include <QAction>
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

constexpr int kNavigationWidth = 176;
constexpr int kStatusMessageMs = 8000;

QString toQString(std::string_view text) {
  return QString::fromUtf8(text.data(), static_cast<int>(text.size()));
}

int indexOf(PageId page) { return static_cast<int>(page); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(tr("Tokenbench"));
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

  QMenu* help = menuBar()->addMenu(tr("&Help"));
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

bool MainWindow::openRunDirectory(const QString& path) {
  const QFileInfo info(path);
  if (path.isEmpty() || !info.isDir()) {
    statusBar()->showMessage(tr("Not a directory: %1").arg(path), kStatusMessageMs);
    return false;
  }
  const QString absolute = QDir::cleanPath(info.absoluteFilePath());
  m_runsPage->addRunDirectory(absolute);
  m_runsPage->setCurrentRun(absolute);
  m_openRunDirectory = absolute;
  WindowSettings().addRecentRun(absolute);
  m_setupPage->setRunDirectory(absolute);
  m_monitorPage->setRunDirectory(absolute);
  m_samplesPage->setRunDirectory(absolute);
  m_comparePage->setRunDirectories(m_runsPage->runDirectories());
  m_comparePage->showLatestComparisonOf(absolute);
  setWindowTitle(tr("%1 \u2014 Tokenbench").arg(info.fileName()));
  statusBar()->showMessage(tr("Opened %1").arg(QDir::toNativeSeparators(absolute)),
                           kStatusMessageMs);
  Q_EMIT runDirectoryOpened(absolute);
  return true;
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
  const QString path = QFileDialog::getExistingDirectory(this, tr("Open Run Directory"));
  if (!path.isEmpty()) {
    openRunDirectory(path);
  }
}

void MainWindow::showAbout() { QMessageBox::about(this, tr("About Tokenbench"), aboutText()); }

}  // namespace tb::app
