#pragma once
// What `tokenbench-trainer compare --out DIR` wrote, read back: DIR/metrics.json (tokenizers,
// per-clip and mean PSNR/SSIM[/LPIPS]), the frames of every clip (lossless PNG strips
// DIR/clip_<kkk>/<name>.png when present, else the palette-quantised DIR/clip_<kkk>.gif cut into
// panels), DIR/metrics.csv and DIR/grid.png.

#include "core/compare_report.h"
#include "widgets/clip_frames.h"

#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace tb::app {

/// One metric of a comparison. PSNR in dB and SSIM in [0, 1]: higher is better; LPIPS (a
/// perceptual distance), rFID and rFVD (Fréchet distances over all the clips, in the mean
/// only): lower is better.
enum class CompareMetric { Psnr, Ssim, Lpips, Rfid, Rfvd };

/// The value of `metric` in `scores`; NaN when the report does not hold it.
double metricValue(const core::CompareScores& scores, CompareMetric metric);

/// Where a tokenizer comes from ("taming vqgan_imagenet_f16_16384", "Tokenbench MAGVIT-v2"),
/// else its label, else its model kind (reports before "source").
QString describeTokenizer(const core::CompareTokenizer& tokenizer);

/// "17\u00d716\u00d716, 14 bits": the token grid [t, h, w] for the compared clips and the bits per
/// token, as far as the report has them ("" for reports before them).
QString tokenGridText(const core::CompareTokenizer& tokenizer);

/// describeTokenizer, its token grid for the compared clips and its bits per token, when the
/// report has them: "LlamaGen vq_ds16_c2i \u00b7 17\u00d716\u00d716, 14 bits".
QString tokenizerSummary(const core::CompareTokenizer& tokenizer);

/// A compare folder, loaded: core's report (the trainer's own structs, read as core reads them)
/// and the files beside it.
class CompareReport {
 public:
  /// Reads DIR/metrics.json through core (core::parseCompareReport). Returns nothing and sets
  /// `*error` to a sentence that names the file when it is missing or core refuses it (not
  /// JSON, another version, a field missing or of the wrong type: core's reason names it).
  static std::optional<CompareReport> load(const QString& directory, QString* error = nullptr);

  /// Short display name of a metric ("PSNR", "SSIM", "LPIPS").
  static QString metricName(CompareMetric metric);
  /// A value formatted as the review shows it ("24.31 dB", "0.812", "0.1432").
  static QString formatMetric(CompareMetric metric, double value);
  /// The number alone, as narrow as it reads ("24.31", "0.812", "0.143"): the per-clip table's
  /// cells (their tooltips and the panels' captions give the unit).
  static QString formatNumber(CompareMetric metric, double value);
  /// The metric with its direction, as a narrow column heads it: "PSNR ↑", "LPIPS ↓".
  static QString metricLabel(CompareMetric metric);
  /// Whether a larger value of `metric` is better.
  static bool higherIsBetter(CompareMetric metric);

  const QString& directory() const { return m_directory; }
  const core::CompareReport& document() const { return m_document; }
  const std::vector<core::CompareTokenizer>& tokenizers() const { return m_document.tokenizers; }
  const std::vector<core::CompareClip>& clips() const { return m_document.clips; }
  /// Mean scores by tokenizer position; empty in a report without them.
  const std::vector<core::CompareScores>& mean() const { return m_document.mean; }
  int tokenizerCount() const { return static_cast<int>(m_document.tokenizers.size()); }
  int clipCount() const { return static_cast<int>(m_document.clips.size()); }
  /// The name of tokenizer `k` (a column and the name of its PNG strips).
  QString tokenizerName(int k) const;
  /// The N behind the means' rFID (frames) and rFVD (clips); 0 without them.
  qint64 rfidSamples() const { return m_document.rfid_samples.value_or(0); }
  qint64 rfvdSamples() const { return m_document.rfvd_samples.value_or(0); }
  /// Metrics present in the file, in the order PSNR, SSIM, LPIPS, rFID, rFVD.
  QVector<CompareMetric> metrics() const;

  /// DIR/clip_<kkk>.gif for clip index `clipIndex`.
  QString gifPath(int clipIndex) const;
  /// DIR/clip_<kkk>/<name>.png ("original" for the input clip).
  QString stripPath(int clipIndex, const QString& name) const;
  /// Every file the trainer wrote for this comparison that exists (metrics, grid, GIFs, strip
  /// folders' PNGs), as paths relative to directory().
  QStringList outputFiles() const;

  /// The frames of clip `clip` (a position in clips()): [original, tokenizer 0, tokenizer 1, ...].
  /// Reads the lossless PNG strips when every one exists, otherwise cuts the GIF into
  /// 1 + tokenizers() equal panels. `*lossless` (when given) says which was used. Returns an
  /// empty list and sets `*error` when neither can be read.
  QVector<widgets::ClipFrames> loadPanels(int clip, bool* lossless = nullptr,
                                          QString* error = nullptr) const;

 private:
  QString m_directory;
  core::CompareReport m_document;
};

}  // namespace tb::app
