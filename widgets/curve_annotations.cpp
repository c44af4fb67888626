#include "widgets/curve_annotations.h"

#include "widgets/qcustomplot_no_keywords.h"

#include <utility>

namespace tb::widgets {

CurveAnnotations::CurveAnnotations(QCustomPlot* plot, QString layer)
    : m_plot(plot), m_layer(std::move(layer)) {}

// ---------------------------------------------------------------------------------------------
// Markers

bool CurveAnnotations::setMarker(const QString& id, double x, const QString& label,
                                 const QColor& color, Qt::PenStyle style) {
  auto it = m_markers.find(id);
  if (it == m_markers.end()) {
    if (m_markers.size() >= kMaxMarkers) {
      return false;
    }
    Marker marker;
    marker.line = new QCPItemLine(m_plot);
    marker.line->setLayer(m_layer);
    marker.text = new QCPItemText(m_plot);
    marker.text->setPositionAlignment(Qt::AlignTop | Qt::AlignLeft);
    marker.text->setPadding(QMargins(3, 2, 3, 2));
    marker.text->setClipToAxisRect(true);
    for (QCPItemPosition* position :
         {marker.line->start, marker.line->end, marker.text->position}) {
      position->setTypeX(QCPItemPosition::ptPlotCoords);
      position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    }
    it = m_markers.insert(id, marker);
  }
  QPen pen(color);
  pen.setStyle(style);
  pen.setWidthF(1.2);
  it->line->setPen(pen);
  it->text->setText(label);
  it->text->setColor(color.darker(130));
  it->text->setBrush(QColor(255, 255, 255, 200));
  placeMarker(*it, x);
  return true;
}

bool CurveAnnotations::removeMarker(const QString& id) {
  const auto it = m_markers.find(id);
  if (it == m_markers.end()) {
    return false;
  }
  m_plot->removeItem(it->line);
  m_plot->removeItem(it->text);
  m_markers.erase(it);
  return true;
}

int CurveAnnotations::clearMarkers(const QString& idPrefix) {
  int removed = 0;
  for (const QString& id : m_markers.keys()) {
    if (id.startsWith(idPrefix) && removeMarker(id)) {
      ++removed;
    }
  }
  return removed;
}

QStringList CurveAnnotations::markerIds() const { return m_markers.keys(); }

std::optional<double> CurveAnnotations::markerPosition(const QString& id) const {
  const auto it = m_markers.constFind(id);
  if (it == m_markers.cend()) {
    return std::nullopt;
  }
  return it->x;
}

QString CurveAnnotations::markerLabel(const QString& id) const {
  const auto it = m_markers.constFind(id);
  return it == m_markers.cend() ? QString() : it->text->text();
}

void CurveAnnotations::placeMarkers() {
  for (auto it = m_markers.begin(); it != m_markers.end(); ++it) {
    placeMarker(*it, it->x);
  }
}

void CurveAnnotations::placeMarker(Marker& marker, double x) {
  marker.x = x;
  marker.line->start->setCoords(x, 0.0);
  marker.line->end->setCoords(x, 1.0);
  marker.text->position->setCoords(x, 0.0);
  // A logarithmic axis has no place for x <= 0.
  const bool shown = m_plot->xAxis->scaleType() != QCPAxis::stLogarithmic || x > 0.0;
  marker.line->setVisible(shown);
  marker.text->setVisible(shown && !marker.text->text().isEmpty());
}

void CurveAnnotations::widenToLabelledMarkers(QCPRange& range, bool logX) const {
  const double span = range.upper - range.lower;
  for (const Marker& marker : m_markers) {
    if (marker.text->text().isEmpty() || (logX && marker.x <= 0.0)) {
      continue;
    }
    if (marker.x < range.lower && range.lower - marker.x <= 0.1 * span) {
      range.lower = marker.x - 0.01 * span;
    } else if (marker.x > range.upper && marker.x - range.upper <= 0.1 * span) {
      range.upper = marker.x + 0.01 * span;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reference lines

void CurveAnnotations::setReferenceLine(const QString& id, double y, const QString& label,
                                        const QColor& color) {
  auto it = m_references.find(id);
  if (it == m_references.end()) {
    ReferenceLine reference;
    reference.line = new QCPItemLine(m_plot);
    reference.line->setLayer(m_layer);
    reference.text = new QCPItemText(m_plot);
    reference.text->setPositionAlignment(Qt::AlignBottom | Qt::AlignRight);
    reference.text->setPadding(QMargins(3, 1, 3, 1));
    reference.text->setClipToAxisRect(true);
    for (QCPItemPosition* position :
         {reference.line->start, reference.line->end, reference.text->position}) {
      position->setTypeX(QCPItemPosition::ptAxisRectRatio);
      position->setTypeY(QCPItemPosition::ptPlotCoords);
    }
    it = m_references.insert(id, reference);
  }
  QPen pen(color);
  pen.setStyle(Qt::DashDotLine);
  pen.setWidthF(1.4);
  it->y = y;
  it->line->setPen(pen);
  it->line->start->setCoords(0.0, y);
  it->line->end->setCoords(1.0, y);
  it->text->setText(label);
  it->text->setColor(color.darker(130));
  it->text->setBrush(QColor(255, 255, 255, 200));
  it->text->position->setCoords(0.995, y);
  it->text->setVisible(!label.isEmpty());
}

bool CurveAnnotations::removeReferenceLine(const QString& id) {
  const auto it = m_references.find(id);
  if (it == m_references.end()) return false;
  m_plot->removeItem(it->line);
  m_plot->removeItem(it->text);
  m_references.erase(it);
  return true;
}

std::optional<double> CurveAnnotations::referenceLineValue(const QString& id) const {
  const auto it = m_references.constFind(id);
  if (it == m_references.cend()) return std::nullopt;
  return it->y;
}

QString CurveAnnotations::referenceLineLabel(const QString& id) const {
  const auto it = m_references.constFind(id);
  return it == m_references.cend() ? QString() : it->text->text();
}

QVector<double> CurveAnnotations::referenceValues() const {
  QVector<double> values;
  for (const ReferenceLine& reference : m_references) {
    values.append(reference.y);
  }
  return values;
}

}  // namespace tb::widgets
