#pragma once

#include "app/gui/compare_report.h"
#include "widgets/clip_player.h"

#include <QImage>
#include <QList>
#include <QWidget>

#include <optional>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTableView;
class QHBoxLayout;

namespace tb::widgets {
class ClipTimeline;
class ColorScaleBar;
}  // namespace tb::widgets

namespace tb::app {

class CompareSortProxyModel;
class CompareTableModel;

/// The review of one comparison (the MAGVIT-v2 paper's figure, live): the original clip and each
/// tokenizer's reconstruction side by side, playing in sync, with its metrics under each (PSNR,
/// SSIM, and LPIPS when the comparison had its weight files, else a line says why); a
/// clip chooser; a difference-heatmap toggle (|reconstruction - original| per pixel, mean over
/// RGB, on one shared colour scale); the sortable per-clip table with its mean row (selecting a
/// row shows that clip); export of the grid as PNG and of the trainer's files.
class CompareReview : public QWidget {
  Q_OBJECT

 public:
  /// Smallest width of one frame in an exported grid (frames are enlarged by whole factors).
  static constexpr int kGridMinCellWidth = 128;

  explicit CompareReview(QWidget* parent = nullptr);
  ~CompareReview() override;

  /// Shows `report` (clip 0 first); std::nullopt clears the review.
  void setReport(const std::optional<CompareReport>& report);
  const std::optional<CompareReport>& report() const { return m_report; }

  /// Position in report()->clips() of the clip shown; -1 with no report.
  int currentClip() const { return m_currentClip; }
  /// Whether the panels come from the lossless PNG strips (false: from the GIF).
  bool panelsAreLossless() const { return m_lossless; }
  /// Why the current clip's frames could not be read ("" when they could).
  QString panelError() const { return m_panelError; }

  bool isHeatmapVisible() const { return m_heatmap; }
  /// Whether the heatmap can be shown: it needs the lossless frames.
  bool isHeatmapAvailable() const;
  /// Upper end of the heatmap's colour scale for the current clip, in 8-bit levels.
  double heatmapScaleMax() const { return m_scaleMax; }

  /// The line that says why a comparison has no LPIPS (shown only then).
  QLabel* lpipsNote() const { return m_lpipsNote; }
  /// original, then one player per tokenizer.
  QList<widgets::ClipPlayer*> players() const { return m_players; }
  widgets::ClipTimeline* timeline() const { return m_timeline; }
  QTableView* tableView() const { return m_table; }
  CompareTableModel* tableModel() const { return m_model; }
  CompareSortProxyModel* sortModel() const { return m_proxy; }

  /// The figure of the current clip at the current frame: a column per panel (original, each
  /// tokenizer) with its name above and its metrics under it; with the heatmap on, a second row
  /// of difference maps and the colour scale. Null with no report.
  QImage gridImage() const;
  /// Writes gridImage() as PNG to `path`. False with `*error` set on failure.
  bool exportGrid(const QString& path, QString* error = nullptr) const;
  /// Copies the trainer's files (metrics.json/.csv, grid.png, clip GIFs, PNG strips) into
  /// `directory` (created if needed), replacing files of the same name. Returns how many were
  /// copied, or -1 with `*error` set.
  int exportFiles(const QString& directory, QString* error = nullptr) const;

 public Q_SLOTS:
  /// Shows clip `clip` (a position in report()->clips()); out-of-range values are ignored.
  void setCurrentClip(int clip);
  /// Shows difference heatmaps instead of the reconstructions (when available).
  void setHeatmapVisible(bool visible);
  void setZoom(tb::widgets::ClipPlayer::Zoom zoom);

 Q_SIGNALS:
  void currentClipChanged(int clip);
  void heatmapVisibleChanged(bool visible);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void fitTableHeight();
  void rebuildPlayers();
  void loadClip();
  void showPanels();
  void selectTableRow();
  void chooseGridFile();
  void chooseExportFolder();
  QStringList captionFor(int panel) const;

  std::optional<CompareReport> m_report;
  QVector<widgets::ClipFrames> m_panels;    // original, each tokenizer
  QVector<widgets::ClipFrames> m_heatmaps;  // each tokenizer (empty until needed)
  int m_currentClip = -1;
  bool m_lossless = false;
  bool m_heatmap = false;
  double m_scaleMax = 0;
  QString m_panelError;

  QComboBox* m_clipBox = nullptr;
  QComboBox* m_zoomBox = nullptr;
  QCheckBox* m_heatmapToggle = nullptr;
  QPushButton* m_exportGrid = nullptr;
  QPushButton* m_exportFiles = nullptr;
  QLabel* m_info = nullptr;
  QLabel* m_lpipsNote = nullptr;
  QWidget* m_playerRow = nullptr;
  QHBoxLayout* m_playerLayout = nullptr;
  QList<widgets::ClipPlayer*> m_players;
  widgets::ColorScaleBar* m_scaleBar = nullptr;
  widgets::ClipTimeline* m_timeline = nullptr;
  QTableView* m_table = nullptr;
  CompareTableModel* m_model = nullptr;
  CompareSortProxyModel* m_proxy = nullptr;
  QSplitter* m_splitter = nullptr;
};

}  // namespace tb::app
