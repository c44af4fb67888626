#pragma once

#include <QStringList>
#include <QWidget>

class QStackedWidget;
class QTreeWidget;

namespace tb::app {

class EmptyState;

/// Runs: the run directories open in this window, by name and location.
class RunsPage : public QWidget {
  Q_OBJECT

 public:
  explicit RunsPage(QWidget* parent = nullptr);

  /// Adds `path` (an absolute directory path) to the list; false if it is already listed.
  bool addRunDirectory(const QString& path);
  /// The listed run directories, in the order they were opened.
  QStringList runDirectories() const;

 private:
  QTreeWidget* m_list = nullptr;
  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
};

}  // namespace tb::app
