#include "app/gui/window_settings.h"

#include <QString>

namespace tb::app {
namespace {

const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");
const QString kPageKey = QStringLiteral("mainWindow/page");
const QString kRecentRunsKey = QStringLiteral("runs/recent");
const QString kRunsFolderKey = QStringLiteral("runs/folder");
const QString kRunsTableKey = QStringLiteral("runs/tableState");

}  // namespace

WindowSettings::WindowSettings()
    : m_settings(QString::fromLatin1(kOrganization), QString::fromLatin1(kApplication)) {}

QByteArray WindowSettings::geometry() const { return m_settings.value(kGeometryKey).toByteArray(); }

void WindowSettings::setGeometry(const QByteArray& geometry) {
  m_settings.setValue(kGeometryKey, geometry);
}

QByteArray WindowSettings::windowState() const { return m_settings.value(kStateKey).toByteArray(); }

void WindowSettings::setWindowState(const QByteArray& state) {
  m_settings.setValue(kStateKey, state);
}

std::optional<PageId> WindowSettings::lastPage() const {
  return pageFromName(m_settings.value(kPageKey).toString().toStdString());
}

void WindowSettings::setLastPage(PageId page) {
  m_settings.setValue(
      kPageKey, QString::fromUtf8(pageName(page).data(), static_cast<int>(pageName(page).size())));
}

QStringList WindowSettings::recentRuns() const {
  QStringList runs = m_settings.value(kRecentRunsKey).toStringList();
  runs.removeAll(QString());
  runs.removeDuplicates();
  return runs.mid(0, kMaxRecentRuns);
}

void WindowSettings::addRecentRun(const QString& path) {
  if (path.isEmpty()) return;
  QStringList runs = recentRuns();
  runs.removeAll(path);
  runs.prepend(path);
  m_settings.setValue(kRecentRunsKey, runs.mid(0, kMaxRecentRuns));
}

void WindowSettings::clearRecentRuns() { m_settings.remove(kRecentRunsKey); }

QString WindowSettings::runsFolder() const { return m_settings.value(kRunsFolderKey).toString(); }

void WindowSettings::setRunsFolder(const QString& path) {
  m_settings.setValue(kRunsFolderKey, path);
}

QByteArray WindowSettings::runsTableState() const {
  return m_settings.value(kRunsTableKey).toByteArray();
}

void WindowSettings::setRunsTableState(const QByteArray& state) {
  m_settings.setValue(kRunsTableKey, state);
}

bool WindowSettings::sync() {
  m_settings.sync();
  return m_settings.status() == QSettings::NoError;
}

}  // namespace tb::app
