#pragma once
// What `tokenbench-trainer compare --out DIR` wrote, read back: DIR/metrics.json (tokenizers,
// per-clip and mean PSNR/SSIM[/LPIPS]), the frames of every clip (lossless PNG strips
// DIR/clip_<kkk>/<name>.png when present, else the palette-quantised DIR/clip_<kkk>.gif cut into
// panels), DIR/metrics.csv and DIR/grid.png.

#include "widgets/clip_frames.h"

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include <optional>

namespace tb::app {

/// One metric of a comparison. PSNR in dB and SSIM in [0, 1]: higher is better; LPIPS (a
/// perceptual distance): lower is better.
enum class CompareMetric { Psnr, Ssim, Lpips };

/// Scores of one tokenizer on one clip (or their mean). A metric the file does not hold is NaN.
struct CompareScores {
  double psnr;
  double ssim;
  double lpips;

  CompareScores();
  double value(CompareMetric metric) const;
};

/// One `--checkpoint NAME=PATH` of the comparison.
struct CompareTokenizer {
  QString name;        ///< column name, also the PNG strip's file name
  QString checkpoint;  ///< checkpoint folder the trainer loaded
  QString weights;     ///< which weights ("ema", "model", ...)
  QString modelKind;   ///< "magvit2", "vqgan", "classic_vq" ...
  QString label;       ///< what it is, for a reference codec ("classic VQ, 10 bits/token"); else ""

  /// The label, else the model kind.
  QString description() const { return label.isEmpty() ? modelKind : label; }
};

/// One compared clip.
struct CompareClip {
  int index = 0;   ///< k of clip_<kkk>
  QString source;  ///< the file it came from, or "synthetic:k"
  int frames = 0;  ///< frame count (0 when metrics.json predates the PNG strips)
  int width = 0;   ///< frame width in pixels (0: unknown)
  int height = 0;  ///< frame height in pixels (0: unknown)
  QHash<QString, CompareScores> scores;  ///< by tokenizer name
};

/// A compare folder, loaded.
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
  /// Whether a larger value of `metric` is better.
  static bool higherIsBetter(CompareMetric metric);

  const QString& directory() const { return m_directory; }
  const QVector<CompareTokenizer>& tokenizers() const { return m_tokenizers; }
  const QVector<CompareClip>& clips() const { return m_clips; }
  const QHash<QString, CompareScores>& mean() const { return m_mean; }
  /// Metrics present in the file, in the order PSNR, SSIM, LPIPS.
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
  QVector<CompareTokenizer> m_tokenizers;
  QVector<CompareClip> m_clips;
  QHash<QString, CompareScores> m_mean;
};

}  // namespace tb::app
