#pragma once

#include <QListWidget>

namespace tb::widgets {

/// A list of messages (problems, alerts) whose items wrap to the list's width instead of
/// running off under a horizontal scroll bar, and whose height follows its rows: as tall as
/// its first maximumVisibleRows() items (at least one line), scrolled vertically past them.
/// Call fitRows() after adding or removing items (an item's text is not expected to change);
/// a resize fits them again by itself.
class WrappingList : public QListWidget {
  Q_OBJECT

 public:
  explicit WrappingList(QWidget* parent = nullptr);

  /// Items shown whole before the list scrolls (default 4).
  void setMaximumVisibleRows(int rows);
  int maximumVisibleRows() const { return m_maxRows; }
  /// Gives every item the height of its text wrapped to the list's width, and the list the
  /// height of its first maximumVisibleRows() items.
  void fitRows();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  int m_maxRows = 4;
  int m_fittedWidth = -1;
};

}  // namespace tb::widgets
