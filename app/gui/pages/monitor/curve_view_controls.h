#pragma once

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace tb::app {

/// The row of view controls above the Monitor's curves: the x axis (step or wall-clock time),
/// the smoothing slider with its value, "Ignore outliers" and "Log x". Signals what the user
/// chooses; the show*() setters show a choice made elsewhere without signalling.
class CurveViewControls : public QWidget {
  Q_OBJECT

 public:
  explicit CurveViewControls(QWidget* parent = nullptr);

  void showWallClock(bool wallClock);
  /// `weight` in [0, 1), shown to two decimals.
  void showSmoothing(double weight);
  void showIgnoreOutliers(bool ignore);
  void showLogX(bool logarithmic);

 Q_SIGNALS:
  void wallClockChosen(bool wallClock);
  void smoothingChosen(double weight);
  void ignoreOutliersChosen(bool ignore);
  void logXChosen(bool logarithmic);

 private:
  QComboBox* m_xAxis = nullptr;
  QSlider* m_smoothing = nullptr;
  QLabel* m_smoothingValue = nullptr;
  QCheckBox* m_ignoreOutliers = nullptr;
  QCheckBox* m_logX = nullptr;
};

}  // namespace tb::app
