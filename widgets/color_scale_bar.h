#pragma once

#include <QString>
#include <QWidget>

namespace tb::widgets {

/// The legend of a heatmap: a horizontal bar of infernoColor() from 0 to maximum(), with tick
/// labels under it and a caption to its left ("|recon - original|, 8-bit levels").
class ColorScaleBar : public QWidget {
  Q_OBJECT

 public:
  explicit ColorScaleBar(QWidget* parent = nullptr);

  /// The value drawn at the right end of the bar (> 0; others are ignored).
  void setMaximum(double maximum);
  double maximum() const { return m_maximum; }
  /// Text drawn left of the bar.
  void setCaption(const QString& caption);
  QString caption() const { return m_caption; }

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  QString m_caption;
  double m_maximum = 255.0;
};

}  // namespace tb::widgets
