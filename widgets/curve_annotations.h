#pragma once

#include <QColor>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

class QCPItemLine;
class QCPItemText;
class QCPRange;
class QCustomPlot;

namespace tb::widgets {

/// The lines a CurvePlot draws across its curves, as QCustomPlot items on the layer of the raw
/// curves: vertical markers at x positions, labelled at the top (the step the discriminator
/// starts at, a rollback), and horizontal reference lines at values, labelled at the right end
/// (a reference codec's PSNR). Changes are drawn at the plot's next replot.
class CurveAnnotations {
 public:
  /// Most markers kept; setMarker() refuses new ones beyond it.
  static constexpr int kMaxMarkers = 400;

  /// Draws on `plot`'s layer `layer` (both must outlive this object).
  CurveAnnotations(QCustomPlot* plot, QString layer);

  /// Places marker `id` at `x` (replacing it if there is one); false, and nothing drawn, when
  /// kMaxMarkers others are there.
  bool setMarker(const QString& id, double x, const QString& label, const QColor& color,
                 Qt::PenStyle style);
  /// False when there is no marker `id`.
  bool removeMarker(const QString& id);
  /// Removes every marker whose id starts with `idPrefix`; returns how many went.
  int clearMarkers(const QString& idPrefix);
  QStringList markerIds() const;
  std::optional<double> markerPosition(const QString& id) const;
  QString markerLabel(const QString& id) const;
  /// Places every marker again, after the x axis changed between linear and logarithmic (a
  /// logarithmic axis has no place for x <= 0).
  void placeMarkers();
  /// Widens `range` (of the data's x values) to the labelled markers just outside it, so that
  /// a marker right before the data (the discriminator's first step) is seen with its label.
  void widenToLabelledMarkers(QCPRange& range, bool logX) const;

  /// Draws reference line `id` at value `y` (replacing it if there is one).
  void setReferenceLine(const QString& id, double y, const QString& label, const QColor& color);
  /// False when there is no reference line `id`.
  bool removeReferenceLine(const QString& id);
  std::optional<double> referenceLineValue(const QString& id) const;
  QString referenceLineLabel(const QString& id) const;
  /// The values of every reference line (kept in view while the y axis follows the data).
  QVector<double> referenceValues() const;

 private:
  struct Marker {
    QCPItemLine* line = nullptr;
    QCPItemText* text = nullptr;
    double x = 0.0;
  };
  struct ReferenceLine {
    QCPItemLine* line = nullptr;
    QCPItemText* text = nullptr;
    double y = 0.0;
  };

  void placeMarker(Marker& marker, double x);

  QCustomPlot* m_plot = nullptr;
  QString m_layer;
  QHash<QString, Marker> m_markers;
  QHash<QString, ReferenceLine> m_references;
};

}  // namespace tb::widgets
