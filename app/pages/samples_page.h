#pragma once

#include <QWidget>

namespace tb::app {

class EmptyState;

/// Samples: reconstructions (GIF and PNG) that the open run writes, step by step. Empty until
/// the sample reader exists; it says so.
class SamplesPage : public QWidget {
  Q_OBJECT

 public:
  explicit SamplesPage(QWidget* parent = nullptr);

  /// The run whose samples this page is for ("" for none); updates the empty state's text.
  void setRunDirectory(const QString& path);
  /// The empty state's headline, e.g. "No run open".
  QString emptyHeadline() const;

 private:
  EmptyState* m_empty = nullptr;
};

}  // namespace tb::app
