#include "app/gui/pages/alert_banner.h"

#include "app/control/wire_text.h"
#include "core/metric_names.h"
#include "widgets/colours.h"
#include "widgets/wrapping_list.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

namespace tb::app {
namespace {

// Alerts shown in Details before the list scrolls.
constexpr int kVisibleAlertRows = 4;

QString stepText(const RunAlert& alert) {
  return alert.step ? AlertBanner::tr("step %1").arg(QLocale().toString(*alert.step))
                    : AlertBanner::tr("no step");
}

}  // namespace

AlertBanner::AlertBanner(QWidget* parent) : QFrame(parent) {
  setObjectName(QStringLiteral("alertBanner"));
  m_icon = new QLabel(this);
  m_icon->setObjectName(QStringLiteral("alertIcon"));
  m_summary = new QLabel(this);
  m_summary->setObjectName(QStringLiteral("alertSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_detailsButton = new QToolButton(this);
  m_detailsButton->setObjectName(QStringLiteral("alertDetailsButton"));
  m_detailsButton->setText(tr("Details"));
  m_detailsButton->setCheckable(true);
  m_dismissButton = new QToolButton(this);
  m_dismissButton->setObjectName(QStringLiteral("alertDismissButton"));
  m_dismissButton->setText(tr("Dismiss"));
  m_dismissButton->setToolTip(tr("Hide until the next alert"));
  // Each alert wraps to the banner's width (a message is often a long sentence).
  m_details = new widgets::WrappingList(this);
  m_details->setObjectName(QStringLiteral("alertDetails"));
  m_details->setMaximumVisibleRows(kVisibleAlertRows);
  m_details->setAlternatingRowColors(true);
  m_details->hide();
  connect(m_detailsButton, &QToolButton::toggled, m_details, &QWidget::setVisible);
  connect(m_dismissButton, &QToolButton::clicked, this, &AlertBanner::dismiss);

  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(m_icon);
  row->addWidget(m_summary, 1);
  row->addWidget(m_detailsButton);
  row->addWidget(m_dismissButton);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(10, 6, 8, 6);
  layout->setSpacing(6);
  layout->addLayout(row);
  layout->addWidget(m_details);
  hide();
}

RunAlert::Severity AlertBanner::severityOfWarning(const QString& code) {
  return code == wireText(core::warning_code::kRollback) ||
                 code == wireText(core::warning_code::kNonfiniteStep)
             ? RunAlert::Severity::Critical
             : RunAlert::Severity::Warning;
}

QString AlertBanner::describeCode(const QString& code, int count) {
  if (code == wireText(core::warning_code::kNonfiniteStep)) {
    return count == 1 ? tr("non-finite step") : tr("non-finite steps");
  }
  if (code == wireText(core::warning_code::kRollback)) {
    return count == 1 ? tr("rollback") : tr("rollbacks");
  }
  if (code == wireText(core::warning_code::kDataSkipped)) {
    return tr("skipped data");
  }
  if (code == QLatin1String("error")) {
    return count == 1 ? tr("error") : tr("errors");
  }
  QString words = code;
  words.replace(QLatin1Char('_'), QLatin1Char(' '));
  return words;
}

void AlertBanner::addAlert(const RunAlert& alert) {
  ++m_total;
  m_critical = m_critical || alert.severity == RunAlert::Severity::Critical;
  bool counted = false;
  for (auto& [code, count] : m_counts) {
    if (code == alert.code) {
      ++count;
      counted = true;
    }
  }
  if (!counted) {
    m_counts.append({alert.code, 1});
  }
  m_alerts.append(alert);
  auto* item = new QListWidgetItem(
      QStringLiteral("%1 \u00b7 %2 \u00b7 %3").arg(stepText(alert), alert.code, alert.message),
      m_details);
  item->setToolTip(alert.message);
  if (m_alerts.size() > kMaxListedAlerts) {
    m_alerts.removeFirst();
    delete m_details->takeItem(0);
  }
  m_details->fitRows();
  m_details->scrollToBottom();
  m_dismissed = false;
  refresh();
  Q_EMIT alertsChanged();
}

void AlertBanner::clear() {
  m_alerts.clear();
  m_counts.clear();
  m_details->clear();
  m_details->fitRows();
  m_total = 0;
  m_dismissed = false;
  m_critical = false;
  refresh();
  Q_EMIT alertsChanged();
}

int AlertBanner::alertCount(const QString& code) const {
  for (const auto& [known, count] : m_counts) {
    if (known == code) {
      return count;
    }
  }
  return 0;
}

QString AlertBanner::summaryText() const { return m_summary->text(); }

void AlertBanner::dismiss() {
  m_dismissed = true;
  refresh();
  Q_EMIT dismissed();
}

void AlertBanner::refresh() {
  setVisible(m_total > 0 && !m_dismissed);
  if (m_total == 0) {
    m_summary->clear();
    return;
  }
  const QLocale locale;
  QStringList parts;
  for (const auto& [code, count] : m_counts) {
    parts.append(QStringLiteral("%1 %2").arg(locale.toString(count), describeCode(code, count)));
  }
  const RunAlert& latest = m_alerts.last();
  m_summary->setText(
      tr("<b>%1</b> \u2014 latest, at %2: %3")
          .arg(parts.join(QStringLiteral(", ")), stepText(latest), latest.message.toHtmlEscaped()));
  const bool critical = m_critical;
  const QString border =
      (critical ? widgets::colours::critical() : widgets::colours::warning()).name();
  const QString background = critical ? QStringLiteral("#fdecea") : QStringLiteral("#fff6e0");
  setStyleSheet(QStringLiteral("QFrame#alertBanner { background: %1; border: 1px solid %2;"
                               " border-left: 4px solid %2; border-radius: 3px; }"
                               "QFrame#alertBanner QLabel { color: #202020; }")
                    .arg(background, border));
  const QStyle::StandardPixmap icon =
      critical ? QStyle::SP_MessageBoxCritical : QStyle::SP_MessageBoxWarning;
  m_icon->setPixmap(style()->standardIcon(icon).pixmap(20, 20));
}

}  // namespace tb::app
