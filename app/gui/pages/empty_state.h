#pragma once

#include <QWidget>

class QLabel;

namespace tb::app {

/// What a page shows while it has nothing real to show: a headline ("No run open") and a hint
/// that says what would fill the page. Centred in the space it is given.
class EmptyState : public QWidget {
  Q_OBJECT

 public:
  EmptyState(const QString& headline, const QString& hint, QWidget* parent = nullptr);

  void setText(const QString& headline, const QString& hint);
  QString headline() const;
  QString hint() const;

 private:
  QLabel* m_headline = nullptr;
  QLabel* m_hint = nullptr;
};

}  // namespace tb::app
