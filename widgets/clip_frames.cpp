#include "widgets/clip_frames.h"

#include <QFileInfo>
#include <QImageReader>

namespace tb::widgets {

ClipFrames readAnimation(const QString& path, QString* error) {
  auto fail = [&](const QString& why) {
    if (error != nullptr) *error = QStringLiteral("%1: %2").arg(path, why);
    return ClipFrames{};
  };
  if (!QFileInfo(path).isFile()) return fail(QStringLiteral("no such file"));
  QImageReader reader(path);
  reader.setDecideFormatFromContent(true);
  if (!reader.canRead()) return fail(reader.errorString());
  ClipFrames frames;
  // GIF frames are composited by the reader (disposal methods applied), so every image it
  // returns is a full frame.
  for (;;) {
    QImage frame = reader.read();
    if (frame.isNull()) break;
    frames.append(frame.convertToFormat(QImage::Format_RGB32));
    if (!reader.supportsAnimation() || reader.imageCount() == 1) break;
    if (reader.imageCount() > 0 && frames.size() >= reader.imageCount()) break;
  }
  if (frames.isEmpty()) return fail(reader.errorString());
  for (const QImage& frame : frames) {
    if (frame.size() != frames.front().size()) return fail(QStringLiteral("frames differ in size"));
  }
  return frames;
}

ClipFrames splitFrameStrip(const QImage& strip, int frameCount) {
  if (strip.isNull()) return {};
  if (frameCount <= 0) {
    if (strip.height() <= 0 || strip.width() % strip.height() != 0) return {};
    frameCount = strip.width() / strip.height();
  }
  if (strip.width() % frameCount != 0) return {};
  const int width = strip.width() / frameCount;
  const QImage rgb = strip.convertToFormat(QImage::Format_RGB32);
  ClipFrames frames;
  frames.reserve(frameCount);
  for (int t = 0; t < frameCount; ++t) {
    frames.append(rgb.copy(t * width, 0, width, rgb.height()));
  }
  return frames;
}

ClipFrames readFrameStrip(const QString& path, int frameCount, QString* error) {
  const ClipFrames whole = readAnimation(path, error);
  if (whole.isEmpty()) return {};
  ClipFrames frames = splitFrameStrip(whole.front(), frameCount);
  if (frames.isEmpty() && error != nullptr) {
    *error = QStringLiteral("%1: a %2x%3 image is not a strip of %4 frames")
                 .arg(path)
                 .arg(whole.front().width())
                 .arg(whole.front().height())
                 .arg(frameCount > 0 ? QString::number(frameCount) : QStringLiteral("square"));
  }
  return frames;
}

ClipFrames cropFrames(const ClipFrames& frames, const QRect& rect) {
  ClipFrames out;
  out.reserve(frames.size());
  for (const QImage& frame : frames) {
    out.append(frame.copy(rect.intersected(frame.rect())));
  }
  return out;
}

int panelCount(int length, int side) { return side > 0 ? length / side : 0; }

}  // namespace tb::widgets
