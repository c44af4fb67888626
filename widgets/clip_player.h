#pragma once

#include "widgets/clip_frames.h"

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

class QLabel;
class QScrollArea;

namespace tb::widgets {

class ClipCanvas;

/// Shows one clip: a title above, the current frame, and optional caption lines under it
/// (metrics such as "PSNR 24.31 dB"). The frame index is set from outside (by a ClipTimeline or
/// the caller), so several players show the same moment of their clips; an index past the last
/// frame shows the last frame, which keeps a 1-frame image beside a 17-frame video meaningful.
///
/// Zoom: Fit scales the frame to the space available, aspect kept; 1x, 2x and 4x draw each
/// pixel as a 1, 2 or 4 pixel square and scroll when the frame does not fit. Enlarging is always
/// nearest neighbour, so pixels stay sharp for inspection; only shrinking is smoothed. Hovering
/// the frame shows the pixel's coordinates and RGB value.
class ClipPlayer : public QWidget {
  Q_OBJECT

 public:
  enum class Zoom { Fit, X1, X2, X4 };

  explicit ClipPlayer(QWidget* parent = nullptr);
  ~ClipPlayer() override;

  /// Replaces the clip. All frames must have one size; an empty list clears the player (it then
  /// draws placeholderText()). Keeps the frame index (clamped when shown). Emits framesChanged().
  void setFrames(const ClipFrames& frames);
  /// Reads `path` (an animated GIF, or any image Qt reads as one frame) and shows it. On failure
  /// clears the player, shows the reason as placeholder text and returns false.
  bool loadAnimation(const QString& path);
  /// Reads a PNG frame strip (`frameCount` frames left to right; <= 0: square frames). As
  /// loadAnimation() on failure.
  bool loadFrameStrip(const QString& path, int frameCount);
  void clear();

  const ClipFrames& frames() const { return m_frames; }
  int frameCount() const { return static_cast<int>(m_frames.size()); }
  /// Size of one frame in pixels; empty when there are no frames.
  QSize frameSize() const;

  /// The index last set; may be past the end (see shownFrameIndex()).
  int frameIndex() const { return m_frameIndex; }
  /// The frame drawn: frameIndex() clamped to [0, frameCount() - 1]; -1 with no frames.
  int shownFrameIndex() const;
  /// The frame drawn now; a null image with no frames.
  QImage currentFrame() const;

  void setZoom(Zoom zoom);
  Zoom zoom() const { return m_zoom; }
  /// Pixels on screen per frame pixel at the current zoom and size (Fit: as laid out now).
  double displayScale() const;
  /// Where the frame is drawn, in this widget's coordinates (empty with no frames).
  QRect frameRectInPlayer() const;

  /// Bold line above the frame ("original", a tokenizer's name); hidden while empty.
  void setTitle(const QString& title);
  QString title() const;
  /// Lines under the frame, one per metric; hidden while empty.
  void setCaptionLines(const QStringList& lines);
  QStringList captionLines() const { return m_captionLines; }
  /// Text drawn where the frame would be while there are no frames.
  void setPlaceholderText(const QString& text);
  QString placeholderText() const { return m_placeholder; }

  /// Names of the zoom levels for menus ("Fit", "1x", "2x", "4x").
  static QString zoomName(Zoom zoom);
  /// Whole-pixel factor of a fixed zoom (1, 2, 4); 0 for Fit.
  static int zoomFactor(Zoom zoom);

 public Q_SLOTS:
  /// Shows frame `index` (clamped when drawn). Emits frameIndexChanged() when it changes.
  void setFrameIndex(int index);

 Q_SIGNALS:
  void frameIndexChanged(int index);
  void framesChanged(int frameCount);
  void zoomChanged(tb::widgets::ClipPlayer::Zoom zoom);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void updateCanvas();
  void fitFrameArea();

  QLabel* m_title = nullptr;
  QScrollArea* m_scroll = nullptr;
  ClipCanvas* m_canvas = nullptr;
  QLabel* m_caption = nullptr;
  ClipFrames m_frames;
  QStringList m_captionLines;
  QString m_placeholder;
  int m_frameIndex = 0;
  Zoom m_zoom = Zoom::Fit;
};

}  // namespace tb::widgets
