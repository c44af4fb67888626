#pragma once
// Reading clips (sequences of equally sized frames) from the files the trainer writes: animated
// GIFs (samples/step_N.gif, compare's clip_<k>.gif) and lossless frame strips (compare's
// clip_<k>/<name>.png: T frames left to right), and cutting panels out of them.

#include <QImage>
#include <QRect>
#include <QString>
#include <QVector>

namespace tb::widgets {

/// Frames of one clip, in display order. Every frame has the same size.
using ClipFrames = QVector<QImage>;

/// Every frame of the animated image (GIF) or still image at `path`, converted to RGB32.
/// Returns an empty list and sets `*error` (when given) to a sentence naming the file when it
/// cannot be read or holds no frame.
ClipFrames readAnimation(const QString& path, QString* error = nullptr);

/// A frame strip: `frameCount` frames of equal width side by side in one image (left to right).
/// `frameCount` <= 0 means "square frames" (count = width / height). Returns an empty list when
/// the strip's width is not a multiple of the frame count.
ClipFrames splitFrameStrip(const QImage& strip, int frameCount);

/// readAnimation() for a PNG frame strip at `path`, split by splitFrameStrip().
ClipFrames readFrameStrip(const QString& path, int frameCount, QString* error = nullptr);

/// The same rectangle `rect` cut out of every frame (e.g. the left half of a sample GIF).
/// Parts of `rect` outside a frame are dropped (QImage::copy semantics, clipped first).
ClipFrames cropFrames(const ClipFrames& frames, const QRect& rect);

/// Number of square panels of side `side` that fit in `length` pixels; 0 when `side` <= 0.
int panelCount(int length, int side);

}  // namespace tb::widgets
