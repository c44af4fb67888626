#pragma once

#include "widgets/clip_frames.h"
#include "widgets/clip_player.h"

#include <QDateTime>
#include <QList>
#include <QMap>
#include <QTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QScrollArea;
class QSlider;
class QStackedWidget;
class QToolButton;

namespace tb::widgets {
class ClipTimeline;
}

namespace tb::app {

class EmptyState;

/// Samples: the reconstructions a run writes at each validation, samples/step_N.gif (up to four
/// validation clips stacked top to bottom, each original | reconstruction). One step slider
/// over the steps that exist chooses the GIF for every panel; each clip row is cut into an
/// original and a reconstruction player, all driven by one timeline (play/pause, frame
/// stepping, fps) and one zoom. The clips play as soon as they are shown (a GIF plays in
/// TensorBoard too), and a new sample keeps the frame and the play/pause the user chose. Fit
/// makes the cells as large as the page allows, putting clips side by side when that helps;
/// 1x, 2x and 4x give whole pixels and the page scrolls. The folder is polled every second, so
/// a live run's new samples appear (and, with "Follow new samples", are shown) as they are
/// written.
class SamplesPage : public QWidget {
  Q_OBJECT

 public:
  /// How often the samples folder is read again, in milliseconds.
  static constexpr int kPollIntervalMs = 1000;

  explicit SamplesPage(QWidget* parent = nullptr);
  ~SamplesPage() override;

  /// The run whose samples this page shows ("" for none).
  void setRunDirectory(const QString& path);
  QString runDirectory() const { return m_runDir; }
  /// The empty state's headline, e.g. "No run open" (meaningful while no sample is shown).
  QString emptyHeadline() const;
  bool isShowingSamples() const;

  /// Sample files in `samplesDir` by step: step_<N>.gif with N a plain decimal number.
  /// Temporary and other files are ignored.
  static QMap<qint64, QString> listSampleFiles(const QString& samplesDir);
  /// How many clip rows a sample GIF of `size` holds: rows of square original | reconstruction
  /// pairs, so height / (width / 2); 1 when the size does not divide that way.
  static int clipRowsIn(QSize size);

  /// Steps with a sample, ascending.
  QList<qint64> steps() const { return m_files.keys(); }
  /// The step shown; -1 with none.
  qint64 currentStep() const { return m_currentStep; }
  /// Why the current sample could not be read ("" when it could).
  QString loadError() const { return m_loadError; }
  /// Whether new samples are shown as they appear (on by default).
  bool followsNewSamples() const;
  void setFollowNewSamples(bool follow);

  QSlider* stepSlider() const { return m_stepSlider; }
  widgets::ClipTimeline* timeline() const { return m_timeline; }
  /// Row by row: original, reconstruction, original, reconstruction, ...
  QList<widgets::ClipPlayer*> players() const { return m_players; }
  /// Clips side by side in the grid now (1 with one clip per row; 0 with none).
  int clipColumns() const;
  /// The scroll area around the grid (the only one: clips never scroll on their own).
  QScrollArea* gridScrollArea() const { return m_gridHost; }

 public Q_SLOTS:
  /// Shows the sample of `step` when there is one.
  void setCurrentStep(qint64 step);
  /// Reads the samples folder now (the poll timer calls this).
  void rescan();
  void setZoom(tb::widgets::ClipPlayer::Zoom zoom);

 Q_SIGNALS:
  void currentStepChanged(qint64 step);
  void stepsChanged(int count);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void fitCells();
  void loadCurrent();
  void rebuildPlayers(int rows);
  void updateStepControls();
  void updateEmptyState();

  QString m_runDir;
  QMap<qint64, QString> m_files;
  qint64 m_currentStep = -1;
  QDateTime m_currentModified;
  qint64 m_currentSize = -1;
  QString m_loadError;

  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
  QToolButton* m_previousStep = nullptr;
  QSlider* m_stepSlider = nullptr;
  QToolButton* m_nextStep = nullptr;
  QLabel* m_stepLabel = nullptr;
  QCheckBox* m_follow = nullptr;
  QComboBox* m_zoomBox = nullptr;
  QLabel* m_info = nullptr;
  QScrollArea* m_gridHost = nullptr;
  QWidget* m_grid = nullptr;
  QGridLayout* m_gridLayout = nullptr;
  QList<QWidget*> m_gridLabels;  // every label of the grid (headings and clip labels)
  QList<QWidget*> m_headings;    // "Original", "Reconstruction" for each possible column
  QList<QWidget*> m_clipLabels;  // "clip 1", ... one per clip
  int m_columns = 0;
  QList<widgets::ClipPlayer*> m_players;
  widgets::ClipTimeline* m_timeline = nullptr;
  QTimer m_poll;
};

}  // namespace tb::app
