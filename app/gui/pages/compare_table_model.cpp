#include "app/gui/pages/compare_table_model.h"

#include <QFont>

#include <cmath>

namespace tb::app {

CompareTableModel::CompareTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareTableModel::setReport(const std::optional<CompareReport>& report) {
  beginResetModel();
  m_report = report;
  m_metrics = report ? report->metrics() : QVector<CompareMetric>{};
  endResetModel();
}

int CompareTableModel::clipAt(int row) const {
  if (!m_report || row < 0 || row >= m_report->clips().size()) return -1;
  return row;
}

int CompareTableModel::rowOfClip(int clip) const {
  if (!m_report || clip < 0 || clip >= m_report->clips().size()) return -1;
  return clip;
}

bool CompareTableModel::metricColumn(int column, int* tokenizer, CompareMetric* metric) const {
  const int offset = column - kFirstMetricColumn;
  if (!m_report || m_metrics.isEmpty() || offset < 0) return false;
  const int t = offset / static_cast<int>(m_metrics.size());
  if (t >= m_report->tokenizers().size()) return false;
  if (tokenizer != nullptr) *tokenizer = t;
  if (metric != nullptr) *metric = m_metrics[offset % m_metrics.size()];
  return true;
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_report) return 0;
  return static_cast<int>(m_report->clips().size()) + (m_report->mean().isEmpty() ? 0 : 1);
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_report) return 0;
  return kFirstMetricColumn + static_cast<int>(m_report->tokenizers().size() * m_metrics.size());
}

bool CompareTableModel::isBest(int clip, int tokenizer, CompareMetric metric) const {
  if (m_report->tokenizers().size() < 2) return false;
  const auto& scores = clip >= 0 ? m_report->clips()[clip].scores : m_report->mean();
  const double mine = scores.value(m_report->tokenizers()[tokenizer].name).value(metric);
  if (std::isnan(mine)) return false;
  for (const CompareTokenizer& other : m_report->tokenizers()) {
    const double theirs = scores.value(other.name).value(metric);
    if (std::isnan(theirs)) continue;
    if (CompareReport::higherIsBetter(metric) ? theirs > mine : theirs < mine) return false;
  }
  return true;
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
  if (!m_report || !index.isValid()) return {};
  const int row = index.row();
  const int column = index.column();
  const int clip = clipAt(row);
  const bool mean = clip < 0;
  if (role == kIsMeanRole) return mean;

  if (column == kClipColumn || column == kSourceColumn) {
    if (mean) {
      if (role == Qt::DisplayRole) {
        return column == kClipColumn ? tr("mean")
                                     : tr("%n clip(s)", nullptr, int(m_report->clips().size()));
      }
      if (role == kSortRole) return column == kClipColumn ? QVariant(-1) : QVariant(QString());
      if (role == Qt::FontRole) {
        QFont font;
        font.setItalic(true);
        return font;
      }
      return {};
    }
    const CompareClip& c = m_report->clips()[clip];
    if (column == kClipColumn) {
      if (role == Qt::DisplayRole) return QString::number(c.index);
      if (role == kSortRole) return c.index;
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    } else {
      if (role == Qt::DisplayRole || role == kSortRole || role == Qt::ToolTipRole) return c.source;
    }
    return {};
  }

  int tokenizer = 0;
  CompareMetric metric = CompareMetric::Psnr;
  if (!metricColumn(column, &tokenizer, &metric)) return {};
  const QString& name = m_report->tokenizers()[tokenizer].name;
  const auto& scores = mean ? m_report->mean() : m_report->clips()[clip].scores;
  const double value = scores.value(name).value(metric);
  switch (role) {
    case Qt::DisplayRole:
      return CompareReport::formatMetric(metric, value);
    case kSortRole:
      return value;
    case Qt::TextAlignmentRole:
      return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole: {
      QFont font;
      font.setBold(isBest(clip, tokenizer, metric));
      font.setItalic(mean);
      return font;
    }
    case Qt::ToolTipRole:
      return tr("%1 of %2 on %3 (%4 is better)")
          .arg(CompareReport::metricName(metric), name,
               mean ? tr("all clips (mean)") : m_report->clips()[clip].source,
               CompareReport::higherIsBetter(metric) ? tr("higher") : tr("lower"));
    default:
      return {};
  }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || !m_report) return {};
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  if (section == kClipColumn) return tr("Clip");
  if (section == kSourceColumn) return tr("Source");
  int tokenizer = 0;
  CompareMetric metric = CompareMetric::Psnr;
  if (!metricColumn(section, &tokenizer, &metric)) return {};
  const CompareTokenizer& t = m_report->tokenizers()[tokenizer];
  if (role == Qt::ToolTipRole) {
    return tr("%1 (%2, %3 weights)\n%4")
        .arg(t.name, t.description().isEmpty() ? tr("unknown model") : t.description(),
             t.weights.isEmpty() ? tr("default") : t.weights, t.checkpoint);
  }
  // Two lines, name over metric: the columns stay as narrow as their numbers.
  return QStringLiteral("%1\n%2%3")
      .arg(t.name, CompareReport::metricName(metric),
           CompareReport::higherIsBetter(metric) ? QStringLiteral(" \u2191")
                                                 : QStringLiteral(" \u2193"));
}

}  // namespace tb::app
