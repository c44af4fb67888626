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
  if (!m_report || row < 0 || row >= m_report->clipCount()) return -1;
  return row;
}

int CompareTableModel::rowOfClip(int clip) const {
  if (!m_report || clip < 0 || clip >= m_report->clipCount()) return -1;
  return clip;
}

bool CompareTableModel::metricColumn(int column, int* tokenizer, CompareMetric* metric) const {
  const int offset = column - kFirstMetricColumn;
  if (!m_report || m_metrics.isEmpty() || offset < 0) return false;
  const int t = offset / static_cast<int>(m_metrics.size());
  if (t >= m_report->tokenizerCount()) return false;
  if (tokenizer != nullptr) *tokenizer = t;
  if (metric != nullptr) *metric = m_metrics[offset % m_metrics.size()];
  return true;
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_report) return 0;
  return m_report->clipCount() + (m_report->mean().empty() ? 0 : 1);
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !m_report) return 0;
  return kFirstMetricColumn + m_report->tokenizerCount() * static_cast<int>(m_metrics.size());
}

bool CompareTableModel::isBest(int clip, int tokenizer, CompareMetric metric) const {
  if (m_report->tokenizerCount() < 2) return false;
  const std::vector<core::CompareScores>& scores =
      clip >= 0 ? m_report->clips()[static_cast<std::size_t>(clip)].scores : m_report->mean();
  if (static_cast<std::size_t>(tokenizer) >= scores.size()) return false;
  const double mine = metricValue(scores[static_cast<std::size_t>(tokenizer)], metric);
  if (std::isnan(mine)) return false;
  for (const core::CompareScores& other : scores) {
    const double theirs = metricValue(other, metric);
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
                                     : tr("%n clip(s)", nullptr, m_report->clipCount());
      }
      if (role == kSortRole) return column == kClipColumn ? QVariant(-1) : QVariant(QString());
      if (role == Qt::FontRole) {
        QFont font;
        font.setItalic(true);
        return font;
      }
      return {};
    }
    const core::CompareClip& c = m_report->clips()[static_cast<std::size_t>(clip)];
    if (column == kClipColumn) {
      if (role == Qt::DisplayRole) return QString::number(c.index);
      if (role == kSortRole) return c.index;
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    } else {
      if (role == Qt::DisplayRole || role == kSortRole || role == Qt::ToolTipRole)
        return QString::fromStdString(c.source);
    }
    return {};
  }

  int tokenizer = 0;
  CompareMetric metric = CompareMetric::Psnr;
  if (!metricColumn(column, &tokenizer, &metric)) return {};
  const QString name = m_report->tokenizerName(tokenizer);
  const std::vector<core::CompareScores>& scores =
      mean ? m_report->mean() : m_report->clips()[static_cast<std::size_t>(clip)].scores;
  const double value = static_cast<std::size_t>(tokenizer) < scores.size()
                           ? metricValue(scores[static_cast<std::size_t>(tokenizer)], metric)
                           : std::nan("");
  switch (role) {
    case Qt::DisplayRole:
      return CompareReport::formatNumber(metric, value);
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
      if (metric == CompareMetric::Rfid || metric == CompareMetric::Rfvd) {
        const bool fid = metric == CompareMetric::Rfid;
        return tr("%1 of %2 over every compared %3 (N = %4; lower is better). Papers use %5: "
                  "with this few the value is biased far upward and ranks these tokenizers "
                  "only; tokenbench-trainer evaluate gives the full protocol.")
            .arg(CompareReport::metricName(metric), name, fid ? tr("frame") : tr("clip"))
            .arg(fid ? m_report->rfidSamples() : m_report->rfvdSamples())
            .arg(fid ? tr("50,000 images") : tr("UCF-101's 3,783 test clips"));
      }
      return tr("%1 of %2 on %3: %4 (%5 is better)")
          .arg(CompareReport::metricName(metric), name,
               mean ? tr("all clips (mean)")
                    : QString::fromStdString(
                          m_report->clips()[static_cast<std::size_t>(clip)].source),
               CompareReport::formatMetric(metric, value),
               CompareReport::higherIsBetter(metric) ? tr("higher") : tr("lower"));
    default:
      return {};
  }
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || !m_report) return {};
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != kHeaderGroupRole &&
      role != kHeaderLabelRole)
    return {};
  if (section == kClipColumn || section == kSourceColumn) {
    if (role == kHeaderGroupRole) return QString();
    if (role == Qt::ToolTipRole && section == kSourceColumn)
      return tr("Where the clip comes from (a file of the data folder, or a procedural clip)");
    return section == kClipColumn ? tr("Clip") : tr("Source");
  }
  int tokenizer = 0;
  CompareMetric metric = CompareMetric::Psnr;
  if (!metricColumn(section, &tokenizer, &metric)) return {};
  const core::CompareTokenizer& t = m_report->tokenizers()[static_cast<std::size_t>(tokenizer)];
  const QString name = QString::fromStdString(t.name);
  if (role == kHeaderGroupRole) return name;
  if (role == kHeaderLabelRole) return CompareReport::metricLabel(metric);
  if (role == Qt::ToolTipRole) {
    const QString description = tokenizerSummary(t);
    return tr("%1 of %2 (%3, %4 weights)\n%5")
        .arg(CompareReport::metricLabel(metric), name,
             description.isEmpty() ? tr("unknown model") : description,
             t.weights.empty() ? tr("default") : QString::fromStdString(t.weights),
             QString::fromStdString(t.checkpoint));
  }
  // Two lines, name over metric: the columns stay as narrow as their numbers.
  return QStringLiteral("%1\n%2%3")
      .arg(name, CompareReport::metricName(metric),
           CompareReport::higherIsBetter(metric) ? QStringLiteral(" \u2191")
                                                 : QStringLiteral(" \u2193"));
}

}  // namespace tb::app
