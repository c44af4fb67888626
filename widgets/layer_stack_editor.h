#pragma once

#include "core/run_config.h"

#include <QMap>
#include <QString>
#include <QWidget>

#include <vector>

class QCheckBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QMenu;
class QPushButton;
class QSpinBox;

namespace tb::widgets {

/// Editor of a MAGVIT-v2 encoder layer list (`model.layers`): one row per layer, in order, with
/// names from core::magvitLayerVocabulary().
///
/// "Add layer" opens a menu of the vocabulary and inserts the chosen layer after the selected
/// row (at the end when none is selected); Remove, Move up and Move down act on the selected
/// row, and rows can be dragged to a new place. Below the list, the selected layer's argument
/// is edited: the repeat count of `consecutive_residual` (required) or the output channels of
/// `compress_space` / `compress_time` (optional: unchecked means the model's default).
///
/// Every change made by the user emits layersChanged() once; setLayers() emits nothing.
class LayerStackEditor : public QWidget {
  Q_OBJECT

 public:
  /// Largest argument the spin box offers (repeat count or channels).
  static constexpr int kMaxArgument = 8192;

  explicit LayerStackEditor(QWidget* parent = nullptr);

  /// Replaces the list without emitting layersChanged(); keeps the selected row when it still
  /// exists.
  void setLayers(const std::vector<core::LayerSpec>& layers);
  std::vector<core::LayerSpec> layers() const;
  int layerCount() const;

  /// Marks rows as bad: row index -> message (shown in red, message as tooltip). Rows not in
  /// `errors` are shown as normal. `listError` marks the list as a whole ("" for none).
  void setErrors(const QMap<int, QString>& errors, const QString& listError = {});
  /// Rows currently marked bad.
  QList<int> errorRows() const;

  /// Selected row, -1 for none.
  int currentRow() const;
  void setCurrentRow(int row);

  /// The text shown for a layer, e.g. "consecutive_residual  × 2" or "compress_space  → 256 ch".
  static QString describeLayer(const core::LayerSpec& layer);
  /// One sentence on what a layer name does (tooltips of the add menu and the rows).
  static QString layerDocumentation(const QString& name);

 public Q_SLOTS:
  /// Inserts `name` after the selected row (or at the end) and selects it. A layer that needs
  /// an argument starts with 1. Unknown names are ignored.
  void addLayer(const QString& name);
  /// Removes the selected row.
  void removeCurrentLayer();
  /// Moves the selected row by `delta` places (clamped to the list).
  void moveCurrentLayer(int delta);

 Q_SIGNALS:
  /// The user changed the list (add, remove, move, drag or an argument).
  void layersChanged();

 private:
  void rebuildItems(const std::vector<core::LayerSpec>& layers, int selectRow);
  void refreshItem(QListWidgetItem* item);
  void syncArgumentEditor();
  void updateButtons();
  void applyArgument();
  void onRowsMoved();
  core::LayerSpec layerAt(int row) const;

  QListWidget* m_list = nullptr;
  QPushButton* m_add = nullptr;
  QMenu* m_addMenu = nullptr;
  QPushButton* m_remove = nullptr;
  QPushButton* m_up = nullptr;
  QPushButton* m_down = nullptr;
  QLabel* m_argumentLabel = nullptr;
  QCheckBox* m_argumentSet = nullptr;
  QSpinBox* m_argument = nullptr;
  QLabel* m_listError = nullptr;
  QMap<int, QString> m_errors;
  bool m_syncing = false;
  bool m_rebuilding = false;
  bool m_dragPending = false;
};

}  // namespace tb::widgets
