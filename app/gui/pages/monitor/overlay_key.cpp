#include "app/gui/pages/monitor/overlay_key.h"

#include "app/gui/pages/monitor/followed_runs.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStringList>
#include <QToolButton>

namespace tb::app {

OverlayKey::OverlayKey(QWidget* parent) : QWidget(parent) {
  m_key = new QLabel(this);
  m_key->setObjectName(QStringLiteral("overlayLabel"));
  m_key->setForegroundRole(QPalette::PlaceholderText);
  m_remove = new QToolButton(this);
  m_remove->setObjectName(QStringLiteral("clearOverlaysButton"));
  m_remove->setText(tr("Remove Overlays"));
  connect(m_remove, &QToolButton::clicked, this, &OverlayKey::removeOverlaysClicked);
  m_key->setWordWrap(true);
  m_key->setTextFormat(Qt::RichText);
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(8);
  row->addWidget(m_key, 1);
  row->addWidget(m_remove);
}

void OverlayKey::showRuns(const FollowedRuns& runs) {
  // With overlays, the colour says which run a curve belongs to: this is the key.
  QStringList key;
  for (int i = 0; i < runs.count() && runs.count() > 1; ++i) {
    key.append(QStringLiteral("<span style='color:%1; font-size:large'>\u25a0</span>&nbsp;%2")
                   .arg(FollowedRuns::color(i).name(), runs.at(i).label.toHtmlEscaped()));
  }
  m_key->setText(key.join(QStringLiteral(" &nbsp; ")));
  m_key->setToolTip(key.isEmpty()
                        ? QString()
                        : tr("Each run in its own colour; the metrics of a plot are told apart by "
                             "the line (solid, dashed, dotted, ...), as in its legend"));
  m_key->setVisible(!key.isEmpty());
  m_remove->setVisible(!key.isEmpty());
  setVisible(!key.isEmpty());
}

}  // namespace tb::app
