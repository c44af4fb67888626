#include "app/gui/compare_report.h"

#include "core/compare_report.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <cmath>
#include <limits>

namespace tb::app {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QString clipName(int clipIndex) {
  return QStringLiteral("clip_%1").arg(clipIndex, 3, 10, QLatin1Char('0'));
}

}  // namespace

double metricValue(const core::CompareScores& scores, CompareMetric metric) {
  switch (metric) {
    case CompareMetric::Psnr:
      return scores.psnr;
    case CompareMetric::Ssim:
      return scores.ssim;
    case CompareMetric::Lpips:
      return scores.lpips.value_or(kNaN);
    case CompareMetric::Rfid:
      return scores.rfid.value_or(kNaN);
    case CompareMetric::Rfvd:
      return scores.rfvd.value_or(kNaN);
  }
  return kNaN;
}

QString describeTokenizer(const core::CompareTokenizer& tokenizer) {
  if (!tokenizer.source.empty()) return QString::fromStdString(tokenizer.source);
  return QString::fromStdString(tokenizer.label.empty() ? tokenizer.model_kind : tokenizer.label);
}

QString tokenGridText(const core::CompareTokenizer& tokenizer) {
  QStringList parts;
  if (tokenizer.token_grid.size() == 3) {
    parts << QStringLiteral("%1\u00d7%2\u00d7%3")
                 .arg(tokenizer.token_grid[0])
                 .arg(tokenizer.token_grid[1])
                 .arg(tokenizer.token_grid[2]);
  }
  if (tokenizer.bits_per_token > 0)
    parts << QObject::tr("%1 bits").arg(tokenizer.bits_per_token, 0, 'g', 4);
  return parts.join(QStringLiteral(", "));
}

QString tokenizerSummary(const core::CompareTokenizer& tokenizer) {
  const QString grid = tokenGridText(tokenizer);
  return describeTokenizer(tokenizer) +
         (grid.isEmpty() ? QString() : QStringLiteral(" \u00b7 ") + grid);
}

QString CompareReport::tokenizerName(int k) const {
  return QString::fromStdString(m_document.tokenizers[static_cast<std::size_t>(k)].name);
}

std::optional<CompareReport> CompareReport::load(const QString& directory, QString* error) {
  const QString path = QDir(directory).filePath(QStringLiteral("metrics.json"));
  auto fail = [&](const QString& why) -> std::optional<CompareReport> {
    if (error != nullptr)
      *error = QStringLiteral("%1: %2").arg(QDir::toNativeSeparators(path), why);
    return std::nullopt;
  };
  QFile file(path);
  if (!file.exists()) return fail(QObject::tr("no such file (not a compare folder)"));
  if (!file.open(QIODevice::ReadOnly)) return fail(file.errorString());
  const QByteArray bytes = file.readAll();
  // The trainer's document, read as core reads it (core/compare_report.h).
  std::string why;
  const std::optional<core::CompareReport> document = core::parseCompareReport(
      std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), &why);
  if (!document) return fail(QString::fromStdString(why));

  CompareReport report;
  report.m_directory = QDir::cleanPath(QFileInfo(directory).absoluteFilePath());
  report.m_document = *document;
  return report;
}

QString CompareReport::metricName(CompareMetric metric) {
  switch (metric) {
    case CompareMetric::Psnr:
      return QStringLiteral("PSNR");
    case CompareMetric::Ssim:
      return QStringLiteral("SSIM");
    case CompareMetric::Lpips:
      return QStringLiteral("LPIPS");
    case CompareMetric::Rfid:
      return QStringLiteral("rFID");
    case CompareMetric::Rfvd:
      return QStringLiteral("rFVD");
  }
  return {};
}

QString CompareReport::formatMetric(CompareMetric metric, double value) {
  if (std::isnan(value)) return QStringLiteral("\u2013");
  switch (metric) {
    case CompareMetric::Psnr:
      return QStringLiteral("%1 dB").arg(value, 0, 'f', 2);
    case CompareMetric::Ssim:
      return QString::number(value, 'f', 3);
    case CompareMetric::Lpips:
      return QString::number(value, 'f', 4);
    case CompareMetric::Rfid:
    case CompareMetric::Rfvd:
      return QString::number(value, 'f', 2);
  }
  return {};
}

QString CompareReport::formatNumber(CompareMetric metric, double value) {
  if (std::isnan(value)) return QStringLiteral("\u2013");
  switch (metric) {
    case CompareMetric::Psnr:
    case CompareMetric::Rfid:
    case CompareMetric::Rfvd:
      return QString::number(value, 'f', 2);
    case CompareMetric::Ssim:
    case CompareMetric::Lpips:
      return QString::number(value, 'f', 3);
  }
  return {};
}

QString CompareReport::metricLabel(CompareMetric metric) {
  return metricName(metric) +
         (higherIsBetter(metric) ? QStringLiteral(" \u2191") : QStringLiteral(" \u2193"));
}

bool CompareReport::higherIsBetter(CompareMetric metric) {
  return metric == CompareMetric::Psnr || metric == CompareMetric::Ssim;
}

QVector<CompareMetric> CompareReport::metrics() const {
  QVector<CompareMetric> out;
  for (CompareMetric metric : {CompareMetric::Psnr, CompareMetric::Ssim, CompareMetric::Lpips,
                               CompareMetric::Rfid, CompareMetric::Rfvd}) {
    bool present = false;
    for (const core::CompareClip& clip : clips()) {
      for (const core::CompareScores& s : clip.scores)
        present = present || !std::isnan(metricValue(s, metric));
    }
    for (const core::CompareScores& s : mean())
      present = present || !std::isnan(metricValue(s, metric));
    if (present) out.append(metric);
  }
  return out;
}

QString CompareReport::gifPath(int clipIndex) const {
  return QDir(m_directory).filePath(clipName(clipIndex) + QStringLiteral(".gif"));
}

QString CompareReport::stripPath(int clipIndex, const QString& name) const {
  return QDir(m_directory)
      .filePath(clipName(clipIndex) + QLatin1Char('/') + name + QStringLiteral(".png"));
}

QStringList CompareReport::outputFiles() const {
  const QDir dir(m_directory);
  QStringList files;
  for (const QString& name : {QStringLiteral("metrics.json"), QStringLiteral("metrics.csv"),
                              QStringLiteral("grid.png")}) {
    if (QFileInfo(dir.filePath(name)).isFile()) files << name;
  }
  for (const core::CompareClip& clip : clips()) {
    const QString gif = clipName(clip.index) + QStringLiteral(".gif");
    if (QFileInfo(dir.filePath(gif)).isFile()) files << gif;
    QStringList names{QStringLiteral("original")};
    for (int k = 0; k < tokenizerCount(); ++k) names << tokenizerName(k);
    for (const QString& name : names) {
      const QString strip = clipName(clip.index) + QLatin1Char('/') + name + QStringLiteral(".png");
      if (QFileInfo(dir.filePath(strip)).isFile()) files << strip;
    }
  }
  return files;
}

QVector<widgets::ClipFrames> CompareReport::loadPanels(int clip, bool* lossless,
                                                       QString* error) const {
  if (lossless != nullptr) *lossless = false;
  if (clip < 0 || clip >= clipCount()) {
    if (error != nullptr) *error = QObject::tr("no clip %1 in this comparison").arg(clip);
    return {};
  }
  const core::CompareClip& c = clips()[static_cast<std::size_t>(clip)];
  QStringList names{QStringLiteral("original")};
  for (int k = 0; k < tokenizerCount(); ++k) names << tokenizerName(k);

  bool allStrips = true;
  for (const QString& name : names)
    allStrips = allStrips && QFileInfo(stripPath(c.index, name)).isFile();
  QString why;
  if (allStrips) {
    QVector<widgets::ClipFrames> panels;
    for (const QString& name : names) {
      widgets::ClipFrames frames =
          widgets::readFrameStrip(stripPath(c.index, name), c.frames, &why);
      if (frames.isEmpty()) break;
      panels.append(frames);
    }
    if (panels.size() == names.size()) {
      if (lossless != nullptr) *lossless = true;
      return panels;
    }
  }
  // The GIF: original | tokenizer 0 | tokenizer 1 ... in equal panels.
  QString gifError;
  const widgets::ClipFrames whole = widgets::readAnimation(gifPath(c.index), &gifError);
  if (whole.isEmpty()) {
    if (error != nullptr) *error = why.isEmpty() ? gifError : why;
    return {};
  }
  const int count = static_cast<int>(names.size());
  const QSize size = whole.front().size();
  if (size.width() % count != 0) {
    if (error != nullptr) {
      *error = QObject::tr("%1: %2 pixels wide, not %3 equal panels")
                   .arg(QDir::toNativeSeparators(gifPath(c.index)))
                   .arg(size.width())
                   .arg(count);
    }
    return {};
  }
  const int width = size.width() / count;
  QVector<widgets::ClipFrames> panels;
  for (int k = 0; k < count; ++k) {
    panels.append(widgets::cropFrames(whole, QRect(k * width, 0, width, size.height())));
  }
  return panels;
}

}  // namespace tb::app
