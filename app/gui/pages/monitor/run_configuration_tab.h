#pragma once

#include <QString>
#include <QWidget>

class QPlainTextEdit;
class QPushButton;

namespace tb::app {

/// The Monitor's Configuration tab: the open run's config.json as it is on disk (whoever started
/// the run), and "New Run from This Configuration", which takes it to the Setup page.
class RunConfigurationTab : public QWidget {
  Q_OBJECT

 public:
  explicit RunConfigurationTab(QWidget* parent = nullptr);

  /// Shows `text` (the configuration, or why there is none); the button is enabled when
  /// `canStartRun`.
  void showConfiguration(const QString& text, bool canStartRun);
  /// The text shown.
  QString text() const;

 Q_SIGNALS:
  void newRunClicked();

 private:
  QPlainTextEdit* m_view = nullptr;
  QPushButton* m_newRun = nullptr;
};

}  // namespace tb::app
