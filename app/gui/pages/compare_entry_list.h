#pragma once

#include "app/control/compare_request.h"

#include <QString>
#include <QVector>
#include <QWidget>

class QPushButton;
class QTableWidget;
class QToolButton;

namespace tb::app {

/// The tokenizers of a new comparison, as the Compare form lists them: a name and a folder (a
/// run directory or a checkpoint folder) per row, in the order the review will show them.
///
/// The open run's rows (the run, and its classic VQ reference) come and go with the open run
/// (setOpenRun, addOpenRunEntry); the rows the user added stay until removed. A name the user
/// did not type is made from its folder (or a base such as "classic-vq") and kept unique with
/// "-2", "-3"..., recomputed whenever rows come, go or move: a suffix never outlives the name it
/// kept apart. Rows move with the up and down buttons or Alt+Up / Alt+Down on the table; Delete
/// removes the selected rows.
class CompareEntryList : public QWidget {
  Q_OBJECT

 public:
  explicit CompareEntryList(QWidget* parent = nullptr);

  /// Adds a row the user chose, at the end: `name` "" names it after its folder (and keeps it
  /// unique), any other name is the user's and stays as given.
  void addEntry(const QString& path, const QString& name = {});
  /// Makes `run` the open run: the previous open run's rows go, and `run` is listed first (named
  /// after its folder), unless "" or the user listed it already.
  void setOpenRun(const QString& run);
  /// Lists `path` under the open run's row as one of its own (its classic VQ reference), named
  /// from `base`; nothing when `path` is listed already.
  void addOpenRunEntry(const QString& path, const QString& base);

  QVector<CompareEntry> entries() const;
  /// Whether a row's folder is `path` (compared cleaned).
  bool contains(const QString& path) const;
  /// Moves the current row `delta` rows (-1: up), keeping it current; false when it cannot.
  bool moveCurrent(int delta);
  /// Removes the selected rows.
  void removeSelected();

  QTableWidget* table() const { return m_table; }

 Q_SIGNALS:
  /// Rows were added, removed, moved or renamed.
  void changed();
  /// Add Folder… was pressed: the form asks for a folder.
  void addFolderRequested();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void insertEntry(int row, const QString& path, const QString& name, bool userNamed,
                   bool ofOpenRun);
  void onItemChanged(int row, int column);
  void updateNames();
  void updateButtons();

  QTableWidget* m_table = nullptr;
  QPushButton* m_add = nullptr;
  QPushButton* m_remove = nullptr;
  QToolButton* m_up = nullptr;
  QToolButton* m_down = nullptr;
};

}  // namespace tb::app
