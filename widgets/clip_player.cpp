#include "widgets/clip_player.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace tb::widgets {

// The drawing surface inside the player's scroll area. Kept out of the header: it is the
// player's implementation, not a widget anyone else places.
class ClipCanvas : public QWidget {
 public:
  explicit ClipCanvas(ClipPlayer* player) : QWidget(player), m_player(player) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  }

  // Where a frame of `frameSize` is drawn inside a canvas of `area`: a fixed zoom by its whole
  // factor; Fit as large as the area allows, aspect kept.
  static QRect targetRect(QSize frameSize, QSize area, ClipPlayer::Zoom zoom) {
    if (frameSize.isEmpty()) return {};
    QSize size;
    if (const int factor = ClipPlayer::zoomFactor(zoom); factor > 0) {
      size = frameSize * factor;
    } else {
      size = frameSize.scaled(area, Qt::KeepAspectRatio);
    }
    size = size.expandedTo(QSize(1, 1));
    return QRect(QPoint((area.width() - size.width()) / 2, (area.height() - size.height()) / 2),
                 size);
  }

  QRect frameRect() const { return targetRect(m_player->frameSize(), size(), m_player->zoom()); }

  QSize sizeHint() const override {
    const QSize frame = m_player->frameSize();
    if (frame.isEmpty()) return {160, 160};
    if (const int factor = ClipPlayer::zoomFactor(m_player->zoom()); factor > 0) {
      return frame * factor;
    }
    // Fit: ask for about 160 pixels of height, in whole factors.
    const int whole = std::max(1, 160 / std::max(1, frame.height()));
    return frame * whole;
  }

  QSize minimumSizeHint() const override {
    if (ClipPlayer::zoomFactor(m_player->zoom()) > 0 && !m_player->frameSize().isEmpty()) {
      return m_player->frameSize() * ClipPlayer::zoomFactor(m_player->zoom());
    }
    return {48, 48};
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    const QImage frame = m_player->currentFrame();
    if (frame.isNull()) {
      painter.setPen(palette().color(QPalette::PlaceholderText));
      painter.drawText(rect().adjusted(6, 6, -6, -6), Qt::AlignCenter | Qt::TextWordWrap,
                       m_player->placeholderText());
      return;
    }
    const QRect target = frameRect();
    const bool down = target.width() < frame.width();
    painter.setRenderHint(QPainter::SmoothPixmapTransform, down);
    painter.drawImage(target, frame);
  }

  void mouseMoveEvent(QMouseEvent* event) override {
    const QImage frame = m_player->currentFrame();
    const QRect target = frameRect();
    const QPoint at = event->position().toPoint();
    if (frame.isNull() || !target.contains(at)) {
      QToolTip::hideText();
      return;
    }
    const int x = (at.x() - target.left()) * frame.width() / target.width();
    const int y = (at.y() - target.top()) * frame.height() / target.height();
    const QRgb rgb = frame.pixel(x, y);
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("x %1, y %2\nR %3  G %4  B %5")
                           .arg(x)
                           .arg(y)
                           .arg(qRed(rgb))
                           .arg(qGreen(rgb))
                           .arg(qBlue(rgb)),
                       this);
  }

 private:
  ClipPlayer* m_player;
};

ClipPlayer::ClipPlayer(QWidget* parent) : QWidget(parent) {
  m_title = new QLabel(this);
  m_title->setObjectName(QStringLiteral("clipTitle"));
  m_title->setAlignment(Qt::AlignHCenter);
  QFont titleFont = m_title->font();
  titleFont.setBold(true);
  m_title->setFont(titleFont);
  m_title->hide();
  // Long names and captions must not widen the player (players in a row keep equal widths);
  // they are cut at the edge and shown whole in the tooltip.
  m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

  m_canvas = new ClipCanvas(this);
  m_canvas->setObjectName(QStringLiteral("clipCanvas"));
  m_scroll = new QScrollArea(this);
  m_scroll->setObjectName(QStringLiteral("clipScroll"));
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_scroll->setWidgetResizable(true);
  m_scroll->setAlignment(Qt::AlignCenter);
  m_scroll->setWidget(m_canvas);
  m_scroll->setBackgroundRole(QPalette::Window);

  m_caption = new QLabel(this);
  m_caption->setObjectName(QStringLiteral("clipCaption"));
  m_caption->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_caption->hide();
  m_caption->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  // In Fit the frame area is only as tall as the frame (fitFrameArea()), and these spacers keep
  // title, frame and caption together in the middle of the space.
  layout->addStretch(0);
  layout->addWidget(m_title);
  layout->addWidget(m_scroll, 1);
  layout->addWidget(m_caption);
  layout->addStretch(0);
  m_placeholder = tr("No frames");
  updateCanvas();
}

ClipPlayer::~ClipPlayer() = default;

void ClipPlayer::setFrames(const ClipFrames& frames) {
  m_frames = frames;
  updateCanvas();
  Q_EMIT framesChanged(frameCount());
}

bool ClipPlayer::loadAnimation(const QString& path) {
  QString error;
  const ClipFrames frames = readAnimation(path, &error);
  if (frames.isEmpty()) {
    m_placeholder = error;
    setFrames({});
    return false;
  }
  setFrames(frames);
  return true;
}

bool ClipPlayer::loadFrameStrip(const QString& path, int frameCount) {
  QString error;
  const ClipFrames frames = readFrameStrip(path, frameCount, &error);
  if (frames.isEmpty()) {
    m_placeholder = error;
    setFrames({});
    return false;
  }
  setFrames(frames);
  return true;
}

void ClipPlayer::clear() { setFrames({}); }

QSize ClipPlayer::frameSize() const {
  return m_frames.isEmpty() ? QSize() : m_frames.front().size();
}

int ClipPlayer::shownFrameIndex() const {
  if (m_frames.isEmpty()) return -1;
  return std::clamp(m_frameIndex, 0, frameCount() - 1);
}

QImage ClipPlayer::currentFrame() const {
  const int index = shownFrameIndex();
  return index < 0 ? QImage() : m_frames[index];
}

void ClipPlayer::setFrameIndex(int index) {
  if (index == m_frameIndex) return;
  const int before = shownFrameIndex();
  m_frameIndex = index;
  if (shownFrameIndex() != before) m_canvas->update();
  Q_EMIT frameIndexChanged(index);
}

void ClipPlayer::setZoom(Zoom zoom) {
  if (zoom == m_zoom) return;
  m_zoom = zoom;
  updateCanvas();
  Q_EMIT zoomChanged(zoom);
}

double ClipPlayer::displayScale() const {
  if (m_frames.isEmpty()) return 0;
  if (const int factor = zoomFactor(m_zoom); factor > 0) return factor;
  return double(m_canvas->frameRect().width()) / frameSize().width();
}

QRect ClipPlayer::frameRectInPlayer() const {
  if (m_frames.isEmpty()) return {};
  const QRect inCanvas = m_canvas->frameRect();
  const QRect visible = QRect(m_canvas->mapTo(this, inCanvas.topLeft()), inCanvas.size())
                            .intersected(QRect(m_scroll->viewport()->mapTo(this, QPoint(0, 0)),
                                               m_scroll->viewport()->size()));
  return visible;
}

void ClipPlayer::setTitle(const QString& title) {
  m_title->setText(title);
  m_title->setToolTip(title);
  m_title->setVisible(!title.isEmpty());
  fitFrameArea();
}

QString ClipPlayer::title() const { return m_title->text(); }

void ClipPlayer::setCaptionLines(const QStringList& lines) {
  m_captionLines = lines;
  m_caption->setText(lines.join(QLatin1Char('\n')));
  m_caption->setToolTip(m_caption->text());
  m_caption->setVisible(!lines.isEmpty());
  fitFrameArea();
}

void ClipPlayer::setPlaceholderText(const QString& text) {
  m_placeholder = text;
  m_canvas->update();
}

QString ClipPlayer::zoomName(Zoom zoom) {
  switch (zoom) {
    case Zoom::Fit:
      return tr("Fit");
    case Zoom::X1:
      return tr("1x");
    case Zoom::X2:
      return tr("2x");
    case Zoom::X4:
      return tr("4x");
  }
  return {};
}

int ClipPlayer::zoomFactor(Zoom zoom) {
  switch (zoom) {
    case Zoom::Fit:
      return 0;
    case Zoom::X1:
      return 1;
    case Zoom::X2:
      return 2;
    case Zoom::X4:
      return 4;
  }
  return 0;
}

void ClipPlayer::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitFrameArea();
}

void ClipPlayer::fitFrameArea() {
  if (m_zoom != Zoom::Fit || m_frames.isEmpty()) {
    m_scroll->setMaximumHeight(QWIDGETSIZE_MAX);
    return;
  }
  const int spacing = layout()->spacing();
  int available = height();
  if (!m_title->isHidden()) available -= m_title->sizeHint().height() + spacing;
  if (!m_caption->isHidden()) available -= m_caption->sizeHint().height() + spacing;
  const QSize fit = frameSize().scaled(QSize(width(), std::max(1, available)), Qt::KeepAspectRatio);
  m_scroll->setMaximumHeight(std::max(m_canvas->minimumSizeHint().height(), fit.height()));
}

void ClipPlayer::updateCanvas() {
  const bool fit = m_zoom == Zoom::Fit;
  m_scroll->setHorizontalScrollBarPolicy(fit ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
  m_scroll->setVerticalScrollBarPolicy(fit ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
  m_canvas->setMinimumSize(m_canvas->minimumSizeHint());
  m_canvas->updateGeometry();
  m_scroll->updateGeometry();
  updateGeometry();
  fitFrameArea();
  m_canvas->update();
}

}  // namespace tb::widgets
