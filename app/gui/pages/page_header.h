#pragma once

#include <QWidget>

class QLabel;

namespace tb::app {

/// The title and one-line description at the top of every page of the main window.
class PageHeader : public QWidget {
  Q_OBJECT

 public:
  PageHeader(const QString& title, const QString& description, QWidget* parent = nullptr);

  QString title() const;
  QString description() const;

 private:
  QLabel* m_title = nullptr;
  QLabel* m_description = nullptr;
};

}  // namespace tb::app
