#pragma once

#include "app/control/run_summary_reader.h"

#include <QString>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <memory>

class QLabel;
class QLineEdit;
class QPushButton;
class QSortFilterProxyModel;
class QStackedWidget;
class QStandardItem;
class QStandardItemModel;
class QTreeView;

namespace tb::app {

class FileReadThread;
class EmptyState;

/// Runs: a browser of a runs folder (every subfolder holding a config.json), plus the run
/// directories opened in this window from anywhere else (a cluster mount, say). One row per run:
/// name, location (the folder the run is in, second so that a narrow window shows it: runs
/// from elsewhere stand out in black among the browsed folder's grey), status, step, best
/// validation PSNR / SSIM / LPIPS / rFID / rFVD, last change. Sortable by
/// any column; reread every refreshIntervalMs() by following the runs' files (cheap: only
/// appended metrics are read). Double-click or Enter opens a run (openRequested()); with runs
/// selected (Ctrl or Shift for several), Overlay on Monitor or the context menu draws their
/// curves over the open run's (overlayRequested()). The folder and the table's sort and column
/// widths are remembered in WindowSettings.
class RunsPage : public QWidget {
  Q_OBJECT

 public:
  /// Table columns, in order.
  enum Column {
    Name,
    Location,
    Status,
    Step,
    Psnr,
    Ssim,
    Lpips,
    Rfid,
    Rfvd,
    Modified,
    ColumnCount
  };

  /// Default time between two rereads of the runs.
  static constexpr int kDefaultRefreshMs = 5000;

  explicit RunsPage(QWidget* parent = nullptr);
  ~RunsPage() override;

  /// The folder browsed (absolute): the remembered one, else "runs" in the current directory.
  QString folder() const { return m_folder; }
  /// Browses `path` (made absolute), remembers it, and rereads at once.
  void setFolder(const QString& path);

  /// Lists `path` (an absolute run directory opened in the window) even when it lies outside
  /// the folder. Returns false if it was already added.
  bool addRunDirectory(const QString& path);
  /// The run directories opened in this window, in the order they were opened.
  QStringList runDirectories() const { return m_opened; }
  /// Shows `path` as the run the window has open (bold).
  void setCurrentRun(const QString& path);

  /// Rereads the folder and every listed run, off this thread; the table follows when the
  /// read is delivered.
  void refresh();
  /// Runs the event loop until the reads asked for are delivered (the table shows them) or
  /// `timeoutMs` has passed; true when none is left. For tests: the window never waits.
  bool waitForReads(int timeoutMs = 10000);
  void setRefreshIntervalMs(int ms);
  int refreshIntervalMs() const { return m_timer.interval(); }

  /// Rows shown, and their contents in the current sort order (for tests and the window).
  int rowCount() const;
  QString cellText(int row, Column column) const;
  QString pathAt(int row) const;
  QTreeView* view() const { return m_view; }
  /// Selects the rows of `paths` (others are deselected); paths not listed are ignored.
  void selectRuns(const QStringList& paths);
  /// The selected runs, in table order.
  QStringList selectedRuns() const;
  /// Asks for the selected runs (but the open one) to be overlaid; false when there are none.
  bool overlaySelected();

 Q_SIGNALS:
  /// The user asked to open the run directory `path` (double-click or Enter on its row).
  void openRequested(const QString& path);
  /// The user asked to draw the curves of `paths` over the open run's (Overlay on Monitor).
  void overlayRequested(const QStringList& paths);

 private:
  void chooseFolder();
  void showListing(const QStringList& paths, const QVector<RunSummary>& summaries);
  void updateRow(const RunSummary& summary);
  int sourceRowOf(const QString& path) const;
  void updateEmptyState(int runs);
  void updateOverlayButton();
  void showContextMenu(const QPoint& position);

  QString m_folder;
  QStringList m_opened;
  QString m_current;
  // Used on the reading thread only (one read at a time, in order).
  std::shared_ptr<RunSummaryReader> m_reader = std::make_shared<RunSummaryReader>();
  FileReadThread* m_reads = nullptr;  // child
  QTimer m_timer;

  QLineEdit* m_folderEdit = nullptr;
  QLabel* m_count = nullptr;
  QPushButton* m_overlay = nullptr;
  QStandardItemModel* m_model = nullptr;
  QSortFilterProxyModel* m_proxy = nullptr;
  QTreeView* m_view = nullptr;
  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
};

}  // namespace tb::app
