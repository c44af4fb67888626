#include "widgets/clip_timeline.h"

#include "widgets/clip_player.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

#include <algorithm>
#include <cmath>

namespace tb::widgets {
namespace {

constexpr double kMinFps = 0.5;
constexpr double kMaxFps = 60.0;

int intervalMs(double fps) { return std::max(1, static_cast<int>(std::lround(1000.0 / fps))); }

}  // namespace

ClipTimeline::ClipTimeline(QWidget* parent) : QWidget(parent) {
  auto button = [this](const char* name, QStyle::StandardPixmap icon, const QString& tip) {
    auto* b = new QToolButton(this);
    b->setObjectName(QString::fromLatin1(name));
    b->setIcon(style()->standardIcon(icon));
    b->setToolTip(tip);
    b->setAutoRaise(true);
    return b;
  };
  m_previous = button("previousFrame", QStyle::SP_MediaSkipBackward, tr("Previous frame"));
  m_playPause = button("playPause", QStyle::SP_MediaPlay, tr("Play"));
  m_next = button("nextFrame", QStyle::SP_MediaSkipForward, tr("Next frame"));
  connect(m_previous, &QToolButton::clicked, this, &ClipTimeline::stepBackward);
  connect(m_next, &QToolButton::clicked, this, &ClipTimeline::stepForward);
  connect(m_playPause, &QToolButton::clicked, this, &ClipTimeline::togglePlaying);

  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setObjectName(QStringLiteral("frameSlider"));
  m_slider->setPageStep(1);
  connect(m_slider, &QSlider::valueChanged, this, &ClipTimeline::setFrameIndex);

  m_position = new QLabel(this);
  m_position->setObjectName(QStringLiteral("framePosition"));
  // Room for "frame 999 / 999" so the slider does not jump as the digits change.
  m_position->setMinimumWidth(
      m_position->fontMetrics().horizontalAdvance(tr("frame %1 / %2").arg(999).arg(999)));

  m_fpsBox = new QDoubleSpinBox(this);
  m_fpsBox->setObjectName(QStringLiteral("fps"));
  m_fpsBox->setRange(kMinFps, kMaxFps);
  m_fpsBox->setDecimals(1);
  m_fpsBox->setSingleStep(1.0);
  m_fpsBox->setSuffix(tr(" fps"));
  m_fpsBox->setValue(m_fps);
  m_fpsBox->setToolTip(tr("Frames per second while playing"));
  connect(m_fpsBox, &QDoubleSpinBox::valueChanged, this, &ClipTimeline::setFps);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(6);
  layout->addWidget(m_previous);
  layout->addWidget(m_playPause);
  layout->addWidget(m_next);
  layout->addWidget(m_slider, 1);
  layout->addWidget(m_position);
  layout->addWidget(m_fpsBox);

  // Keys of video players: space plays or pauses, ',' and '.' step a frame. Window-wide while
  // this timeline is visible (a hidden page's timeline does not answer).
  auto shortcut = [this](const QKeySequence& keys, void (ClipTimeline::*slot)()) {
    auto* s = new QShortcut(keys, this);
    s->setContext(Qt::WindowShortcut);
    connect(s, &QShortcut::activated, this, slot);
  };
  shortcut(QKeySequence(Qt::Key_Space), &ClipTimeline::togglePlaying);
  shortcut(QKeySequence(Qt::Key_Comma), &ClipTimeline::stepBackward);
  shortcut(QKeySequence(Qt::Key_Period), &ClipTimeline::stepForward);
  m_previous->setToolTip(tr("Previous frame (,)"));
  m_next->setToolTip(tr("Next frame (.)"));

  m_timer.setInterval(intervalMs(m_fps));
  connect(&m_timer, &QTimer::timeout, this, &ClipTimeline::stepForward);
  updateControls();
}

ClipTimeline::~ClipTimeline() = default;

void ClipTimeline::attach(ClipPlayer* player) {
  if (player == nullptr || players().contains(player)) return;
  m_players.append(player);
  connect(player, &ClipPlayer::framesChanged, this, &ClipTimeline::updateFrameCount);
  // By the time destroyed() fires, the player's own members are gone: forget it by address.
  connect(player, &QObject::destroyed, this, [this](QObject* gone) {
    m_players.removeIf([gone](const QPointer<ClipPlayer>& p) {
      return p.isNull() || static_cast<QObject*>(p.data()) == gone;
    });
    updateFrameCount();
  });
  player->setFrameIndex(m_frameIndex);
  updateFrameCount();
}

void ClipTimeline::detach(ClipPlayer* player) {
  if (player == nullptr) return;
  disconnect(player, nullptr, this, nullptr);
  m_players.removeAll(player);
  updateFrameCount();
}

void ClipTimeline::detachAll() {
  for (const QPointer<ClipPlayer>& player : m_players) {
    if (player) disconnect(player, nullptr, this, nullptr);
  }
  m_players.clear();
  updateFrameCount();
}

QList<ClipPlayer*> ClipTimeline::players() const {
  QList<ClipPlayer*> out;
  for (const QPointer<ClipPlayer>& player : m_players) {
    if (player) out.append(player);
  }
  return out;
}

void ClipTimeline::setFrameIndex(int index) {
  index = std::clamp(index, 0, std::max(0, m_frameCount - 1));
  if (index == m_frameIndex) return;
  m_frameIndex = index;
  pushIndex();
  updateControls();
  Q_EMIT frameIndexChanged(index);
}

void ClipTimeline::stepForward() {
  if (m_frameCount <= 0) return;
  setFrameIndex((m_frameIndex + 1) % m_frameCount);
}

void ClipTimeline::stepBackward() {
  if (m_frameCount <= 0) return;
  setFrameIndex((m_frameIndex + m_frameCount - 1) % m_frameCount);
}

void ClipTimeline::setPlaying(bool playing) {
  playing = playing && m_frameCount > 1;
  if (playing == isPlaying()) return;
  if (playing) {
    m_timer.start(intervalMs(m_fps));
  } else {
    m_timer.stop();
  }
  updateControls();
  Q_EMIT playingChanged(playing);
}

void ClipTimeline::showStill() {
  pause();
  setFrameIndex(m_frameCount - 1);
}

void ClipTimeline::setFps(double fps) {
  fps = std::clamp(fps, kMinFps, kMaxFps);
  if (fps == m_fps) return;
  m_fps = fps;
  m_timer.setInterval(intervalMs(fps));
  const QSignalBlocker block(m_fpsBox);
  m_fpsBox->setValue(fps);
}

void ClipTimeline::updateFrameCount() {
  int count = 0;
  for (ClipPlayer* player : players()) count = std::max(count, player->frameCount());
  const bool changed = count != m_frameCount;
  m_frameCount = count;
  if (m_frameIndex > std::max(0, count - 1)) {
    m_frameIndex = std::max(0, count - 1);
    Q_EMIT frameIndexChanged(m_frameIndex);
  }
  pushIndex();
  if (count <= 1) setPlaying(false);
  updateControls();
  if (changed) Q_EMIT frameCountChanged(count);
}

void ClipTimeline::updateControls() {
  const bool frames = m_frameCount > 1;
  {
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, std::max(0, m_frameCount - 1));
    m_slider->setValue(m_frameIndex);
  }
  m_slider->setEnabled(frames);
  m_previous->setEnabled(frames);
  m_next->setEnabled(frames);
  m_playPause->setEnabled(frames);
  m_playPause->setIcon(
      style()->standardIcon(isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  m_playPause->setToolTip(isPlaying() ? tr("Pause (space)") : tr("Play (space)"));
  m_position->setText(m_frameCount > 0 ? tr("frame %1 / %2").arg(m_frameIndex + 1).arg(m_frameCount)
                                       : tr("no frames"));
}

void ClipTimeline::pushIndex() {
  for (ClipPlayer* player : players()) player->setFrameIndex(m_frameIndex);
}

}  // namespace tb::widgets
