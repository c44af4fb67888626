#pragma once

#include <QWidget>

class QLabel;

namespace tb::app {

/// The title and one-line description at the top of every page of the main window. On a short
/// screen (its page under kCompactPageHeight px tall) it hides, leaving its height to the page's
/// content: the window's page list says which page this is. `parent` is the page.
class PageHeader : public QWidget {
  Q_OBJECT

 public:
  /// Below this height of its page the header is hidden (a 1024x640 screen gives a page about
  /// 550 px; 1280x800, about 700).
  static constexpr int kCompactPageHeight = 620;

  PageHeader(const QString& title, const QString& description, QWidget* parent);

  QString title() const;
  QString description() const;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  QLabel* m_title = nullptr;
  QLabel* m_description = nullptr;
};

}  // namespace tb::app
