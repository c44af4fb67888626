#include "app/window_settings.h"

#include <QString>

namespace tb::app {
namespace {

const QString kGeometryKey = QStringLiteral("mainWindow/geometry");
const QString kStateKey = QStringLiteral("mainWindow/state");
const QString kPageKey = QStringLiteral("mainWindow/page");

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

bool WindowSettings::sync() {
  m_settings.sync();
  return m_settings.status() == QSettings::NoError;
}

}  // namespace tb::app
