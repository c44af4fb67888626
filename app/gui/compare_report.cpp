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

CompareScores scoresFrom(const core::CompareScores& scores) {
  CompareScores s;
  s.psnr = scores.psnr;
  s.ssim = scores.ssim;
  s.lpips = scores.lpips.value_or(kNaN);
  return s;
}

QString clipName(int clipIndex) {
  return QStringLiteral("clip_%1").arg(clipIndex, 3, 10, QLatin1Char('0'));
}

}  // namespace

CompareScores::CompareScores() : psnr(kNaN), ssim(kNaN), lpips(kNaN) {}

double CompareScores::value(CompareMetric metric) const {
  switch (metric) {
    case CompareMetric::Psnr:
      return psnr;
    case CompareMetric::Ssim:
      return ssim;
    case CompareMetric::Lpips:
      return lpips;
  }
  return kNaN;
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
  for (const core::CompareTokenizer& t : document->tokenizers) {
    report.m_tokenizers.append(
        {QString::fromStdString(t.name), QString::fromStdString(t.checkpoint),
         QString::fromStdString(t.weights), QString::fromStdString(t.model_kind),
         QString::fromStdString(t.label)});
  }
  for (const core::CompareClip& c : document->clips) {
    CompareClip clip;
    clip.index = c.index;
    clip.source = QString::fromStdString(c.source);
    clip.frames = c.frames;
    clip.width = c.width;
    clip.height = c.height;
    for (std::size_t k = 0; k < c.scores.size(); ++k) {
      clip.scores.insert(report.m_tokenizers[static_cast<int>(k)].name, scoresFrom(c.scores[k]));
    }
    report.m_clips.append(clip);
  }
  for (std::size_t k = 0; k < document->mean.size(); ++k) {
    report.m_mean.insert(report.m_tokenizers[static_cast<int>(k)].name,
                         scoresFrom(document->mean[k]));
  }
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
  }
  return {};
}

bool CompareReport::higherIsBetter(CompareMetric metric) { return metric != CompareMetric::Lpips; }

QVector<CompareMetric> CompareReport::metrics() const {
  QVector<CompareMetric> out;
  for (CompareMetric metric : {CompareMetric::Psnr, CompareMetric::Ssim, CompareMetric::Lpips}) {
    bool present = false;
    for (const CompareClip& clip : m_clips) {
      for (const CompareScores& s : clip.scores) present = present || !std::isnan(s.value(metric));
    }
    for (const CompareScores& s : m_mean) present = present || !std::isnan(s.value(metric));
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
  for (const CompareClip& clip : m_clips) {
    const QString gif = clipName(clip.index) + QStringLiteral(".gif");
    if (QFileInfo(dir.filePath(gif)).isFile()) files << gif;
    QStringList names{QStringLiteral("original")};
    for (const CompareTokenizer& t : m_tokenizers) names << t.name;
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
  if (clip < 0 || clip >= m_clips.size()) {
    if (error != nullptr) *error = QObject::tr("no clip %1 in this comparison").arg(clip);
    return {};
  }
  const CompareClip& c = m_clips[clip];
  QStringList names{QStringLiteral("original")};
  for (const CompareTokenizer& t : m_tokenizers) names << t.name;

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
