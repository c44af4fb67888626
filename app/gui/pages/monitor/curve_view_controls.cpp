#include "app/gui/pages/monitor/curve_view_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QSignalBlocker>
#include <QSlider>

#include <cmath>

namespace tb::app {
namespace {

constexpr double kSmoothingSteps = 100.0;  // slider positions per unit of weight

}  // namespace

CurveViewControls::CurveViewControls(QWidget* parent) : QWidget(parent) {
  m_xAxis = new QComboBox(this);
  m_xAxis->setObjectName(QStringLiteral("xAxisChooser"));
  m_xAxis->addItem(tr("Step"));
  m_xAxis->addItem(tr("Wall-clock time"));
  connect(m_xAxis, qOverload<int>(&QComboBox::activated), this,
          [this](int index) { Q_EMIT wallClockChosen(index == 1); });
  m_smoothing = new QSlider(Qt::Horizontal, this);
  m_smoothing->setObjectName(QStringLiteral("smoothingSlider"));
  m_smoothing->setRange(0, 99);
  m_smoothing->setFixedWidth(150);
  m_smoothing->setToolTip(
      tr("Exponential moving average of the training curves (debiased, as in TensorBoard); the "
         "raw values stay faint behind. Validation metrics are averages already and are drawn "
         "as they are."));
  m_smoothingValue = new QLabel(this);
  m_smoothingValue->setObjectName(QStringLiteral("smoothingValue"));
  m_smoothingValue->setMinimumWidth(QFontMetrics(font()).horizontalAdvance(QStringLiteral("0.00")) +
                                    4);
  connect(m_smoothing, &QSlider::valueChanged, this,
          [this](int value) { Q_EMIT smoothingChosen(value / kSmoothingSteps); });
  m_ignoreOutliers = new QCheckBox(tr("Ignore outliers"), this);
  m_ignoreOutliers->setObjectName(QStringLiteral("ignoreOutliers"));
  m_ignoreOutliers->setChecked(true);
  m_ignoreOutliers->setToolTip(
      tr("Scale the y axes to the bulk of each curve; spikes are drawn but clipped"));
  connect(m_ignoreOutliers, &QCheckBox::toggled, this, &CurveViewControls::ignoreOutliersChosen);
  m_logX = new QCheckBox(tr("Log x"), this);
  m_logX->setObjectName(QStringLiteral("pageLogX"));
  m_logX->setToolTip(tr("Logarithmic x axis on every plot"));
  connect(m_logX, &QCheckBox::toggled, this, &CurveViewControls::logXChosen);

  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(8);
  row->addWidget(new QLabel(tr("X axis"), this));
  row->addWidget(m_xAxis);
  row->addSpacing(14);
  row->addWidget(new QLabel(tr("Smoothing"), this));
  row->addWidget(m_smoothing);
  row->addWidget(m_smoothingValue);
  row->addSpacing(14);
  row->addWidget(m_ignoreOutliers);
  row->addWidget(m_logX);
  row->addStretch(1);
}

void CurveViewControls::showWallClock(bool wallClock) {
  const QSignalBlocker blocker(m_xAxis);
  m_xAxis->setCurrentIndex(wallClock ? 1 : 0);
}

void CurveViewControls::showSmoothing(double weight) {
  {
    const QSignalBlocker blocker(m_smoothing);
    m_smoothing->setValue(static_cast<int>(std::lround(weight * kSmoothingSteps)));
  }
  m_smoothingValue->setText(QLocale().toString(weight, 'f', 2));
}

void CurveViewControls::showIgnoreOutliers(bool ignore) {
  const QSignalBlocker blocker(m_ignoreOutliers);
  m_ignoreOutliers->setChecked(ignore);
}

void CurveViewControls::showLogX(bool logarithmic) {
  const QSignalBlocker blocker(m_logX);
  m_logX->setChecked(logarithmic);
}

}  // namespace tb::app
