#include "app/gui/pages/run_progress_view.h"
#include "app/text/duration_text.h"
#include "widgets/colours.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>

#include <algorithm>
#include <cmath>

namespace tb::app {
namespace {

namespace colours = widgets::colours;

// The bar counts in these units so that runs past 2^31 steps still fit an int.
constexpr int kBarMaximum = 10000;
// A running run silent for longer than this gets "last write N ago" in its line.
constexpr qint64 kStaleAfterSeconds = 60;

}  // namespace

RunProgressView::RunProgressView(QWidget* parent) : QWidget(parent) {
  m_bar = new QProgressBar(this);
  m_bar->setObjectName(QStringLiteral("runProgressBar"));
  m_bar->setRange(0, kBarMaximum);
  m_bar->setTextVisible(false);
  m_bar->setMinimumWidth(100);
  m_bar->setMaximumWidth(260);
  m_bar->setFixedHeight(12);
  m_text = new QLabel(this);
  m_text->setObjectName(QStringLiteral("runProgressText"));
  m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long line is cut at the window's edge rather than widening the window (whole in the
  // tooltip).
  m_text->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_text->setMinimumWidth(160);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(10);
  layout->addWidget(m_bar, 2);
  layout->addWidget(m_text, 3);
  clear();
}

void RunProgressView::setRunning(qint64 step, qint64 total, double itPerS, double etaS) {
  m_state = State::Running;
  m_step = step;
  m_total = total;
  m_itPerS = itPerS;
  m_message.clear();
  double eta = etaS;
  if (!(std::isfinite(eta) && eta >= 0.0) && std::isfinite(itPerS) && itPerS > 0.0 &&
      total > step) {
    eta = static_cast<double>(total - step) / itPerS;
  }
  m_eta = std::isfinite(eta) && eta >= 0.0 ? formatDuration(eta) : QString();
  refresh();
}

void RunProgressView::setEnded(State state, qint64 step, qint64 total, const QString& message) {
  m_state = state;
  m_step = step;
  m_total = total;
  m_message = message;
  m_eta.clear();
  refresh();
}

void RunProgressView::setLastWrite(qint64 secondsAgo) {
  if (secondsAgo != m_secondsSinceWrite) {
    m_secondsSinceWrite = secondsAgo;
    refresh();
  }
}

void RunProgressView::clear() {
  m_state = State::Empty;
  m_step = 0;
  m_total = 0;
  m_itPerS = 0.0;
  m_eta.clear();
  m_message.clear();
  m_secondsSinceWrite = 0;
  refresh();
}

QString RunProgressView::text() const { return m_text->text(); }

int RunProgressView::value() const { return m_bar->value(); }

int RunProgressView::maximum() const { return m_bar->maximum(); }

void RunProgressView::refresh() {
  const QLocale locale;
  const bool knownTotal = m_total > 0;
  const double fraction =
      knownTotal ? std::clamp(static_cast<double>(m_step) / static_cast<double>(m_total), 0.0, 1.0)
                 : 0.0;
  m_bar->setVisible(m_state != State::Empty);
  m_bar->setValue(static_cast<int>(std::lround(fraction * kBarMaximum)));
  const QString position = knownTotal ? tr("step %1 of %2 (%3 %)")
                                            .arg(locale.toString(m_step), locale.toString(m_total),
                                                 locale.toString(100.0 * fraction, 'f', 0))
                                      : tr("step %1").arg(locale.toString(m_step));
  QStringList parts;
  QString color;
  switch (m_state) {
    case State::Empty:
      m_text->clear();
      return;
    case State::Running:
      parts << tr("<b>Running</b>") << position;
      if (std::isfinite(m_itPerS) && m_itPerS > 0.0) {
        parts << tr("%1 it/s").arg(locale.toString(m_itPerS, 'g', 3));
      }
      if (!m_eta.isEmpty()) {
        parts << tr("ETA %1").arg(m_eta);
      }
      if (m_secondsSinceWrite > kStaleAfterSeconds) {
        parts << tr("<span style='color:%1'>last write %2 ago</span>")
                     .arg(colours::attention().name(),
                          formatDuration(static_cast<double>(m_secondsSinceWrite)));
      }
      break;
    case State::Completed:
      parts << tr("<b style='color:%1'>Completed</b>").arg(colours::done().name()) << position;
      color = colours::done().name();
      break;
    case State::Stopped:
      parts << tr("<b>Stopped</b>") << position;
      color = colours::idle().name();
      break;
    case State::Interrupted:
      parts << tr("<b style='color:%1'>Interrupted</b>").arg(colours::attention().name())
            << position << tr("the trainer is not running");
      color = colours::attention().name();
      break;
    case State::Failed:
      parts << tr("<b style='color:%1'>Failed</b>").arg(colours::failed().name()) << position;
      if (!m_message.isEmpty()) {
        parts << m_message.toHtmlEscaped();
      }
      color = colours::failed().name();
      break;
  }
  m_bar->setStyleSheet(color.isEmpty()
                           ? QString()
                           : QStringLiteral("QProgressBar::chunk { background: %1; }").arg(color));
  m_text->setText(parts.join(QStringLiteral(" \u00b7 ")));
  m_text->setToolTip(m_text->text());
}

}  // namespace tb::app
