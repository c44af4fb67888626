#include "widgets/codebook_view.h"

#include "widgets/curve_plot.h"
#include "widgets/qcustomplot_no_keywords.h"

#include <QComboBox>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPalette>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace tb::widgets {
namespace {

const QColor kBarColor(0x1f, 0x77, 0xb4);
const QColor kDeadColor(0xd6, 0x27, 0x28);
// Dead-code share above which the figure turns amber, and red: a tenth of the codebook unused
// is common early on; half of it unused is collapse.
constexpr double kWarnDeadShare = 0.10;
constexpr double kBadDeadShare = 0.50;

QLabel* caption(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text.toUpper(), parent);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * 0.8);
  font.setBold(true);
  font.setLetterSpacing(QFont::PercentageSpacing, 106);
  label->setFont(font);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

QLabel* figure(QWidget* parent, double scale) {
  auto* label = new QLabel(parent);
  QFont font = label->font();
  font.setPointSizeF(font.pointSizeF() * scale);
  font.setBold(true);
  label->setFont(font);
  return label;
}

}  // namespace

CodebookView::CodebookView(QWidget* parent) : QWidget(parent) {
  // Summary: the figures a user reads first.
  auto* summary = new QFrame(this);
  summary->setObjectName(QStringLiteral("codebookSummary"));
  summary->setFrameShape(QFrame::StyledPanel);
  summary->setFixedWidth(230);
  m_deadShare = figure(summary, 2.6);
  m_deadShare->setObjectName(QStringLiteral("deadShare"));
  m_deadDetail = new QLabel(summary);
  m_deadDetail->setObjectName(QStringLiteral("deadDetail"));
  m_deadDetail->setWordWrap(true);
  m_perplexityLabel = figure(summary, 1.3);
  m_perplexityLabel->setObjectName(QStringLiteral("perplexityFigure"));
  m_perplexityLabel->setWordWrap(true);
  m_usedLabel = figure(summary, 1.3);
  m_usedLabel->setObjectName(QStringLiteral("usedFigure"));
  m_usedLabel->setWordWrap(true);
  auto* summaryLayout = new QVBoxLayout(summary);
  summaryLayout->setContentsMargins(14, 12, 14, 12);
  summaryLayout->setSpacing(4);
  summaryLayout->addWidget(caption(tr("Dead codes"), summary));
  summaryLayout->addWidget(m_deadShare);
  summaryLayout->addWidget(m_deadDetail);
  summaryLayout->addSpacing(14);
  summaryLayout->addWidget(caption(tr("Perplexity"), summary));
  summaryLayout->addWidget(m_perplexityLabel);
  summaryLayout->addSpacing(10);
  summaryLayout->addWidget(caption(tr("Codes used"), summary));
  summaryLayout->addWidget(m_usedLabel);
  summaryLayout->addStretch(1);

  // Histogram of code use, most used first.
  m_stepChooser = new QComboBox(this);
  m_stepChooser->setObjectName(QStringLiteral("codebookStep"));
  m_stepChooser->setMinimumContentsLength(10);
  m_stepChooser->setToolTip(tr("Validation step whose code counts are shown"));
  connect(m_stepChooser, qOverload<int>(&QComboBox::activated), this, [this](int index) {
    if (index >= 0) {
      requestStep(m_stepChooser->itemData(index).toLongLong());
    }
  });
  auto* histogramTitle = new QLabel(tr("Code usage in validation, codes sorted by count"), this);
  QFont titleFont = histogramTitle->font();
  titleFont.setBold(true);
  histogramTitle->setFont(titleFont);

  m_histogram = new QCustomPlot(this);
  m_histogram->setObjectName(QStringLiteral("codebookHistogram"));
  m_histogram->setMinimumSize(300, 180);
  m_histogram->setAntialiasedElements(QCP::aeAll);
  m_histogram->xAxis->setLabel(tr("code rank (most used first)"));
  m_histogram->yAxis->setLabel(tr("uses"));
  m_histogram->yAxis->setScaleType(QCPAxis::stLogarithmic);
  m_histogram->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  m_histogram->yAxis->setNumberFormat(QStringLiteral("eb"));
  m_histogram->yAxis->setNumberPrecision(0);
  m_histogramGraph = m_histogram->addGraph();
  m_histogramGraph->setLineStyle(QCPGraph::lsStepLeft);
  m_histogramGraph->setPen(QPen(kBarColor, 1.2));
  QColor fill = kBarColor;
  fill.setAlpha(90);
  m_histogramGraph->setBrush(fill);
  m_deadRegion = new QCPItemRect(m_histogram);
  m_deadRegion->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_deadRegion->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
  QColor deadFill = kDeadColor;
  deadFill.setAlpha(36);
  m_deadRegion->setBrush(deadFill);
  m_deadRegion->setPen(Qt::NoPen);
  m_deadRegionLabel = new QCPItemText(m_histogram);
  m_deadRegionLabel->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  m_deadRegionLabel->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
  m_deadRegionLabel->setColor(kDeadColor.darker(120));
  m_deadRegionLabel->setPadding(QMargins(3, 4, 3, 2));

  m_histogramEmpty =
      new QLabel(tr("No code counts yet.\nThe trainer writes them at every validation "
                    "(codebook/step_N.safetensors, every train.valid_every steps)."),
                 this);
  m_histogramEmpty->setObjectName(QStringLiteral("codebookEmpty"));
  m_histogramEmpty->setAlignment(Qt::AlignCenter);
  m_histogramEmpty->setWordWrap(true);
  m_histogramEmpty->setForegroundRole(QPalette::PlaceholderText);
  m_histogramStack = new QStackedWidget(this);
  m_histogramStack->addWidget(m_histogramEmpty);
  m_histogramStack->addWidget(m_histogram);

  auto* histogramHeader = new QHBoxLayout;
  histogramHeader->addWidget(histogramTitle);
  histogramHeader->addStretch(1);
  histogramHeader->addWidget(new QLabel(tr("Validation at"), this));
  histogramHeader->addWidget(m_stepChooser);
  auto* histogramColumn = new QVBoxLayout;
  histogramColumn->addLayout(histogramHeader);
  histogramColumn->addWidget(m_histogramStack, 1);

  // The same figures over the run.
  m_perplexityPlot = new CurvePlot(this);
  m_perplexityPlot->setObjectName(QStringLiteral("perplexityPlot"));
  m_perplexityPlot->setTitle(tr("Perplexity over the run"));
  m_perplexityPlot->setAxisLabels(tr("step"), tr("perplexity"));
  m_usagePlot = new CurvePlot(this);
  m_usagePlot->setObjectName(QStringLiteral("usagePlot"));
  m_usagePlot->setTitle(tr("Codebook usage over the run"));
  m_usagePlot->setAxisLabels(tr("step"), tr("codes used (%)"));
  for (CurvePlot* plot : {m_perplexityPlot, m_usagePlot}) {
    plot->setIgnoreOutliers(false);  // a collapse is exactly the "outlier" to show
  }

  auto* top = new QHBoxLayout;
  top->addWidget(summary);
  top->addLayout(histogramColumn, 1);
  auto* bottom = new QHBoxLayout;
  bottom->addWidget(m_perplexityPlot, 1);
  bottom->addWidget(m_usagePlot, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top, 3);
  layout->addLayout(bottom, 2);

  updateFigures();
  updateHistogram();
}

CodebookView::~CodebookView() = default;

void CodebookView::setCounts(qint64 step, const QVector<qint64>& counts) {
  m_step = step;
  m_sortedCounts = counts;
  std::sort(m_sortedCounts.begin(), m_sortedCounts.end(), std::greater<>());
  m_usedCodes = 0;
  double total = 0.0;
  for (qint64 count : m_sortedCounts) {
    if (count > 0) {
      ++m_usedCodes;
      total += static_cast<double>(count);
    }
  }
  double entropy = 0.0;
  for (qint64 count : m_sortedCounts) {
    if (count > 0) {
      const double p = static_cast<double>(count) / total;
      entropy -= p * std::log(p);
    }
  }
  m_perplexity = total > 0.0 ? std::exp(entropy) : std::numeric_limits<double>::quiet_NaN();
  if (!m_steps.contains(step)) {
    QList<qint64> steps = m_steps;
    steps.append(step);
    const QSignalBlocker blocker(this);  // the step is shown already: nothing to ask for
    setAvailableSteps(steps);
  }
  const int index = m_stepChooser->findData(step);
  if (index >= 0) {
    m_stepChooser->setCurrentIndex(index);
  }
  updateFigures();
  updateHistogram();
}

void CodebookView::setAvailableSteps(QList<qint64> steps) {
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  const bool following = followsLatest();
  const qint64 latestBefore = m_steps.isEmpty() ? -1 : m_steps.last();
  m_steps = steps;
  {
    const QSignalBlocker blocker(m_stepChooser);
    m_stepChooser->clear();
    for (qint64 step : m_steps) {
      m_stepChooser->addItem(tr("step %1").arg(QLocale().toString(step)), step);
    }
    const int index = m_stepChooser->findData(m_step);
    m_stepChooser->setCurrentIndex(index >= 0 ? index : m_stepChooser->count() - 1);
  }
  if (following && !m_steps.isEmpty() && m_steps.last() != latestBefore &&
      m_steps.last() != m_step) {
    Q_EMIT stepRequested(m_steps.last());
  }
}

QList<qint64> CodebookView::availableSteps() const { return m_steps; }

void CodebookView::requestStep(qint64 step) { Q_EMIT stepRequested(step); }

bool CodebookView::followsLatest() const {
  return m_step < 0 || m_steps.isEmpty() || m_step >= m_steps.last();
}

void CodebookView::appendPerplexity(double x, double perplexity) {
  m_perplexityPlot->appendPoint(tr("perplexity"), x, perplexity);
}

void CodebookView::appendUsage(double x, double usage) {
  m_usagePlot->appendPoint(tr("codes used"), x, 100.0 * usage);
}

void CodebookView::setCurvesXAxis(const QString& label, bool duration) {
  m_perplexityPlot->setAxisLabels(label, tr("perplexity"));
  m_usagePlot->setAxisLabels(label, tr("codes used (%)"));
  m_perplexityPlot->setTimeAxis(duration);
  m_usagePlot->setTimeAxis(duration);
}

void CodebookView::clear() {
  m_step = -1;
  m_sortedCounts.clear();
  m_usedCodes = 0;
  m_perplexity = 0.0;
  m_steps.clear();
  m_stepChooser->clear();
  m_perplexityPlot->clear();
  m_usagePlot->clear();
  updateFigures();
  updateHistogram();
}

double CodebookView::deadCodeShare() const {
  if (m_sortedCounts.isEmpty()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return static_cast<double>(m_sortedCounts.size() - m_usedCodes) /
         static_cast<double>(m_sortedCounts.size());
}

QString CodebookView::deadShareText() const { return m_deadShare->text(); }

void CodebookView::updateFigures() {
  const QLocale locale;
  if (m_sortedCounts.isEmpty()) {
    m_deadShare->setText(QStringLiteral("\u2014"));
    m_deadShare->setStyleSheet({});
    m_deadDetail->setText(tr("No validation has written code counts yet."));
    m_perplexityLabel->setText(QStringLiteral("\u2014"));
    m_usedLabel->setText(QStringLiteral("\u2014"));
    return;
  }
  const double dead = deadCodeShare();
  const qint64 size = m_sortedCounts.size();
  m_deadShare->setText(QStringLiteral("%1 %").arg(locale.toString(100.0 * dead, 'f', 1)));
  const QColor color = dead >= kBadDeadShare    ? kDeadColor
                       : dead >= kWarnDeadShare ? QColor(0xc7, 0x7c, 0x02)
                                                : QColor(0x2c, 0xa0, 0x2c);
  m_deadShare->setStyleSheet(QStringLiteral("color: %1;").arg(color.name()));
  m_deadDetail->setText(tr("%1 of %2 codes unused in the validation at step %3")
                            .arg(locale.toString(size - m_usedCodes), locale.toString(size),
                                 locale.toString(m_step)));
  m_perplexityLabel->setText(
      std::isfinite(m_perplexity)
          ? tr("%1 <span style='font-weight:normal'>of %2 possible</span>")
                .arg(locale.toString(m_perplexity, 'f', 1), locale.toString(size))
          : QStringLiteral("\u2014"));
  m_usedLabel->setText(
      tr("%1 <span style='font-weight:normal'>(%2 %)</span>")
          .arg(locale.toString(m_usedCodes), locale.toString(100.0 * (1.0 - dead), 'f', 1)));
}

void CodebookView::updateHistogram() {
  if (m_sortedCounts.isEmpty()) {
    m_histogramStack->setCurrentWidget(m_histogramEmpty);
    m_histogramGraph->data()->clear();
    return;
  }
  m_histogramStack->setCurrentWidget(m_histogram);
  const int size = static_cast<int>(m_sortedCounts.size());
  QVector<QCPGraphData> points;
  points.reserve(static_cast<int>(m_usedCodes) + 1);
  // Dead codes have no place on a log axis: the graph stops where they begin, and the shaded
  // region stands for them.
  for (int i = 0; i < m_usedCodes; ++i) {
    points.append(QCPGraphData(i, static_cast<double>(m_sortedCounts[i])));
  }
  if (m_usedCodes > 0) {
    // Close the last step so the least used code gets its full width.
    points.append(QCPGraphData(static_cast<double>(m_usedCodes), points.last().value));
  }
  m_histogramGraph->data()->set(points, true);
  const double maxCount = m_usedCodes > 0 ? static_cast<double>(m_sortedCounts.first()) : 1.0;
  m_histogram->xAxis->setRange(0, size);
  m_histogram->yAxis->setRange(0.8, std::max(10.0, maxCount * 2.0));
  const bool anyDead = m_usedCodes < size;
  m_deadRegion->setVisible(anyDead);
  m_deadRegionLabel->setVisible(anyDead);
  if (anyDead) {
    m_deadRegion->topLeft->setCoords(static_cast<double>(m_usedCodes), 0.0);
    m_deadRegion->bottomRight->setCoords(static_cast<double>(size), 1.0);
    m_deadRegionLabel->position->setCoords(0.5 * static_cast<double>(m_usedCodes + size), 0.0);
    m_deadRegionLabel->setText(
        tr("%1 dead").arg(QLocale().toString(static_cast<qint64>(size) - m_usedCodes)));
  }
  m_histogram->replot();
}

}  // namespace tb::widgets
