#pragma once

#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QSlider;
class QToolButton;

namespace tb::widgets {

class ClipPlayer;

/// The transport shared by several ClipPlayers: previous frame, play/pause, next frame, a frame
/// slider, "frame i / n" and a frames-per-second box. Every attached player shows the same
/// frame index, so originals and reconstructions play in sync. The frame count is the largest
/// of the attached players' (a shorter clip holds its last frame). Playing loops. While the
/// timeline is visible, space plays or pauses and ',' / '.' step back / forward in its window.
class ClipTimeline : public QWidget {
  Q_OBJECT

 public:
  /// Frames per second unless setFps() says otherwise (the trainer writes GIFs at 8 fps).
  static constexpr double kDefaultFps = 8.0;

  explicit ClipTimeline(QWidget* parent = nullptr);
  ~ClipTimeline() override;

  /// Drives `player` from now on (its frame index is set at once). Attaching twice is harmless;
  /// a player that is destroyed detaches itself.
  void attach(ClipPlayer* player);
  void detach(ClipPlayer* player);
  void detachAll();
  /// The attached players, in attach order.
  QList<ClipPlayer*> players() const;

  int frameIndex() const { return m_frameIndex; }
  /// The largest frame count of the attached players; 0 with none.
  int frameCount() const { return m_frameCount; }

  bool isPlaying() const { return m_timer.isActive(); }
  double fps() const { return m_fps; }

 public Q_SLOTS:
  /// Shows frame `index` (clamped to [0, frameCount() - 1]) in every player.
  void setFrameIndex(int index);
  /// Next frame; after the last one, the first.
  void stepForward();
  /// Previous frame; before the first one, the last.
  void stepBackward();
  /// Starts or stops playing. Playing needs at least two frames; otherwise it stays stopped.
  void setPlaying(bool playing);
  void play() { setPlaying(true); }
  void pause() { setPlaying(false); }
  void togglePlaying() { setPlaying(!isPlaying()); }
  /// Frames per second while playing, within [0.5, 60].
  void setFps(double fps);
  /// Pauses on the last frame: what a still picture of the clips (a screenshot) shows, since a
  /// causal video tokenizer reconstructs its last frame with the most context and its first,
  /// encoded alone, often worst.
  void showStill();

 Q_SIGNALS:
  void frameIndexChanged(int index);
  void frameCountChanged(int count);
  void playingChanged(bool playing);

 private:
  void updateFrameCount();
  void updateControls();
  void pushIndex();

  QToolButton* m_previous = nullptr;
  QToolButton* m_playPause = nullptr;
  QToolButton* m_next = nullptr;
  QSlider* m_slider = nullptr;
  QLabel* m_position = nullptr;
  QDoubleSpinBox* m_fpsBox = nullptr;
  QList<QPointer<ClipPlayer>> m_players;
  QTimer m_timer;
  int m_frameIndex = 0;
  int m_frameCount = 0;
  double m_fps = kDefaultFps;
};

}  // namespace tb::widgets
