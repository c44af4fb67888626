#pragma once

#include "app/control/page_id.h"

#include <QByteArray>
#include <QSettings>
#include <QString>
#include <QStringList>

#include <optional>

namespace tb::app {

/// What the main window remembers between sessions (geometry, state of bars and docks, last
/// page, recent run directories, the Runs page's folder and table), kept in QSettings under
/// organization "Tokenbench", application "tokenbench". Tests redirect it with QSettings::setPath()
/// or XDG_CONFIG_HOME.
class WindowSettings {
 public:
  static constexpr const char* kOrganization = "Tokenbench";
  static constexpr const char* kApplication = "tokenbench";

  WindowSettings();

  /// QWidget::saveGeometry() bytes; empty when never saved.
  QByteArray geometry() const;
  void setGeometry(const QByteArray& geometry);

  /// QMainWindow::saveState() bytes; empty when never saved.
  QByteArray windowState() const;
  void setWindowState(const QByteArray& state);

  /// The page shown when the window last closed, if any (and still a known page).
  std::optional<PageId> lastPage() const;
  void setLastPage(PageId page);

  /// How many run directories File > Open Recent remembers.
  static constexpr int kMaxRecentRuns = 10;

  /// Run directories opened lately, most recent first (at most kMaxRecentRuns).
  QStringList recentRuns() const;
  /// Puts `path` first in recentRuns() (moving it if it is there already).
  void addRecentRun(const QString& path);
  void clearRecentRuns();

  /// The folder the Runs page browses; empty when never chosen.
  QString runsFolder() const;
  void setRunsFolder(const QString& path);

  /// QHeaderView::saveState() of the Runs table (column widths, sort column and order).
  QByteArray runsTableState() const;
  void setRunsTableState(const QByteArray& state);

  /// Writes pending changes to disk; false when the settings file cannot be written.
  bool sync();

 private:
  QSettings m_settings;
};

}  // namespace tb::app
