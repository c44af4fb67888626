#pragma once

#include "app/control/file_read_thread.h"
#include "app/control/page_id.h"

#include <QMainWindow>
#include <QString>

#include <functional>

class QLabel;
class QListWidget;
class QMenu;
class QMenuBar;
class QStackedWidget;

namespace tb::app {

class ComparePage;
class MonitorPage;
class RunControlBar;
class RunController;
class RunsPage;
class SamplesPage;
class SetupPage;
class UserGuideDialog;
struct LaunchPlan;
struct TrainerLocation;

/// The Tokenbench window: a navigation list of pages (Setup, Monitor, Samples, Compare,
/// Runs) on the left, the run-control bar above the current page on the right (its Details
/// below the page), File, Run, View and Help menus, and a status bar that shows the trainer in
/// use. Opens at 1280x800 unless restoreWindowState() finds a remembered geometry, and fits a
/// 1024x640 screen (kMinimumWidth x kMinimumHeight). Ctrl+1 ... Ctrl+5 show the pages; the
/// mouse wheel scrolls pages rather than editing the input under it (UnfocusedWheelFilter).
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  /// Default size of a window with no remembered geometry, in device-independent pixels.
  static constexpr int kDefaultWidth = 1280;
  static constexpr int kDefaultHeight = 800;
  /// Most the window asks of the screen: a 1024x640 screen less a window manager's title bar
  /// and panel.
  static constexpr int kMinimumWidth = 1000;
  static constexpr int kMinimumHeight = 560;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Shows `page`.
  void setCurrentPage(PageId page);
  PageId currentPage() const;
  /// The widget of `page`. Owned by this window.
  QWidget* pageWidget(PageId page) const;

  SetupPage* setupPage() const { return m_setupPage; }
  MonitorPage* monitorPage() const { return m_monitorPage; }
  SamplesPage* samplesPage() const { return m_samplesPage; }
  ComparePage* comparePage() const { return m_comparePage; }
  RunsPage* runsPage() const { return m_runsPage; }
  /// The trainer process of the window's run, and the bar above the pages that drives it.
  RunController* runController() const { return m_runController; }
  RunControlBar* runControlBar() const { return m_runControlBar; }
  /// The run directory opened last (what Resume continues); empty when none.
  QString openRunDirectoryPath() const { return m_openRunDirectory; }

  /// Tells the window which trainer a run would use (shown on Setup and in the status bar).
  void setTrainerLocation(const TrainerLocation& trainer);
  /// Shows the configuration file named with --config on the Setup page.
  void setConfigPath(const QString& path);
  /// Opens the run directory `path` in every page (Setup's runs folder, where the next run goes,
  /// stays as it is; File > Open and Open Recent then show the Monitor). A folder of runs (what
  /// TensorBoard's
  /// --logdir takes) is browsed on the Runs page instead, and any other folder is refused: both
  /// return false and leave the open run, the Setup page and Open Recent alone, and the status
  /// bar (and lastOpenProblem() for a refusal) says why.
  bool openRunDirectory(const QString& path);
  /// openRunDirectory() for the window's own menus and pages: what `path` holds is read off the
  /// window's thread (a hung network mount leaves the window responsive), then it opens as
  /// openRunDirectory() would and `done(opened)` runs.
  void openRunDirectoryLater(const QString& path, std::function<void(bool)> done = {});
  /// Runs the event loop until the folder reads asked for so far (openRunDirectoryLater(), Open
  /// Recent's check) have landed or `timeoutMs` passed; true when none is left. For tests.
  bool waitForReads(int timeoutMs = 10000);
  /// Why the last openRunDirectory() refused its folder; empty after one that opened a run or
  /// browsed a folder of runs.
  QString lastOpenProblem() const { return m_openProblem; }
  /// Shows `configPath` (a run's config.json) on the Setup page for a new run, after asking
  /// whether to discard the page's unsaved edits; false when the user keeps them.
  bool newRunFromConfiguration(const QString& configPath);
  /// Where Help > User Guide opens (docs/user-guide.md, installed or in the source tree); empty
  /// when it is nowhere to be found.
  static QString userGuidePath();
  /// The window Help > User Guide (F1) shows the guide in; null until first asked for.
  UserGuideDialog* userGuideDialog() const { return m_userGuide; }

  /// Restores geometry, bar state and last page from WindowSettings. Returns false when no
  /// geometry was remembered (the window keeps its default size).
  bool restoreWindowState();
  /// Writes geometry, bar state and current page to WindowSettings.
  void saveWindowState() const;
  /// Whether closing the window saves its state (true by default; off for screenshots).
  void setRemembersWindowState(bool remember);

  /// The text of Help > About: version, protocol and schema versions, licence.
  static QString aboutText();

 Q_SIGNALS:
  /// Emitted after openRunDirectory() opened `path` (absolute, cleaned).
  void runDirectoryOpened(const QString& path);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void createPages();
  void createMenus();
  void createStatusBar();
  void chooseRunDirectory();
  /// Shows the run directory `absolute` in every page (openRunDirectory() has checked it; a run
  /// this window launched is shown at its hello, before its trainer writes config.json).
  void showRun(const QString& absolute);
  /// What a folder being opened holds, from the file system alone (any thread).
  struct FolderCheck {
    enum Kind { Missing, Run, FolderOfRuns, Checkpoint, Other } kind = Missing;
    QString absolute;  ///< cleaned absolute path; empty when Missing
    int runs = 0;      ///< run directories inside (FolderOfRuns)
  };
  static FolderCheck checkFolder(const QString& path);
  /// Opens, browses or refuses `path` as `check` found it (openRunDirectory()'s contract).
  bool openCheckedFolder(const QString& path, const FolderCheck& check);
  // Run control (main_window_runs.cpp): the bar, the Run menu, recent runs, launch plans.
  QWidget* createRunControl();
  void createRunMenu(QMenuBar* bar);
  void fillRecentMenu();
  LaunchPlan launchPlan() const;
  void onRunDirectoryReady(const QString& path);
  /// With a run going: asks whether to stop it and quit; true when the window may close.
  bool confirmCloseWithRun();
  void showAbout();
  void showUserGuide();
  void showShortcuts();
  void overlayRuns(const QStringList& paths);

  QListWidget* m_navigation = nullptr;
  QStackedWidget* m_pages = nullptr;
  SetupPage* m_setupPage = nullptr;
  MonitorPage* m_monitorPage = nullptr;
  SamplesPage* m_samplesPage = nullptr;
  ComparePage* m_comparePage = nullptr;
  RunsPage* m_runsPage = nullptr;
  UserGuideDialog* m_userGuide = nullptr;
  RunController* m_runController = nullptr;
  RunControlBar* m_runControlBar = nullptr;
  QMenu* m_recentMenu = nullptr;
  // Which recent runs still exist, what a folder being opened holds.
  FileReadThread m_folderReads{QStringLiteral("run folders")};
  QString m_openRunDirectory;
  QString m_openProblem;
  QLabel* m_trainerStatus = nullptr;
  bool m_remembersWindowState = true;
};

}  // namespace tb::app
