#pragma once

#include "app/page_id.h"

#include <QByteArray>
#include <QSettings>

#include <optional>

namespace tb::app {

/// What the main window remembers between sessions (geometry, state of bars and docks, last
/// page), kept in QSettings under organization "Tokenbench", application "tokenbench".
/// Tests redirect it with QSettings::setPath() or XDG_CONFIG_HOME.
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

  /// Writes pending changes to disk; false when the settings file cannot be written.
  bool sync();

 private:
  QSettings m_settings;
};

}  // namespace tb::app
