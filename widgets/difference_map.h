#pragma once
// Difference heatmaps: how far a reconstruction is from its original, pixel by pixel.

#include "widgets/clip_frames.h"

#include <QImage>
#include <QRgb>

namespace tb::widgets {

/// The colour of `t` in [0, 1] (clamped) on the "inferno" map (matplotlib's perceptually
/// uniform map: black, purple, orange, pale yellow), so larger differences read as brighter.
QRgb infernoColor(double t);

/// Per pixel mean over R, G, B of |reconstruction - original|, in [0, 255] 8-bit levels, as a
/// row-major vector of width x height values. Empty when the sizes differ or an image is null.
QVector<float> meanAbsoluteDifference(const QImage& original, const QImage& reconstruction);

/// The largest per-pixel meanAbsoluteDifference() over every frame pair (frames are paired by
/// index; extra frames are ignored). 0 for empty or mismatched clips.
double maxMeanAbsoluteDifference(const ClipFrames& original, const ClipFrames& reconstruction);

/// A round upper end for a colour scale that must cover `value` 8-bit levels: the smallest of
/// 4, 8, 16, 32, 64, 128, 255 that is >= value.
double roundScaleMax(double value);

/// meanAbsoluteDifference() coloured with infernoColor(d / scaleMax) (values past scaleMax are
/// drawn at the top colour). A null image when the sizes differ.
QImage differenceImage(const QImage& original, const QImage& reconstruction, double scaleMax);

/// differenceImage() of every frame pair; frames of `reconstruction` past the end of `original`
/// are paired with the last original frame.
ClipFrames differenceFrames(const ClipFrames& original, const ClipFrames& reconstruction,
                            double scaleMax);

}  // namespace tb::widgets
