#pragma once

#include <QDialog>
#include <QString>

class QLabel;
class QPushButton;
class QTextBrowser;

namespace tb::app {

/// Help > User Guide: the installed documentation (Markdown) read inside the window, so that it
/// shows with no browser or Markdown viewer installed. Links between the documents and to their
/// headings ("configuration.md", "#the-run-directory") move within the dialog, with Back and
/// Forward; web links go to the desktop's browser. "Open in Browser" hands the shown document
/// to the desktop as well, for those who prefer their own viewer.
class UserGuideDialog : public QDialog {
  Q_OBJECT

 public:
  /// Shows `path` (a Markdown file; "" when no guide is installed: the dialog says so).
  explicit UserGuideDialog(const QString& path, QWidget* parent = nullptr);

  /// The browser that shows the documents.
  QTextBrowser* browser() const { return m_browser; }
  /// The document shown (a local file's path).
  QString currentPath() const;

  /// GitHub's name for a heading's anchor: "Setup: configure a run" -> "setup-configure-a-run".
  static QString headingAnchor(const QString& heading);

 private:
  void openInBrowser();

  QTextBrowser* m_browser = nullptr;
  QPushButton* m_back = nullptr;
  QPushButton* m_forward = nullptr;
  QPushButton* m_external = nullptr;
  QLabel* m_note = nullptr;
};

}  // namespace tb::app
