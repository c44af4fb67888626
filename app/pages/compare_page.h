#pragma once

#include <QWidget>

namespace tb::app {

class EmptyState;

/// Compare: two or more runs side by side (curves, PSNR, SSIM, LPIPS, codebook usage).
/// Empty until comparison exists; it says so.
class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(QWidget* parent = nullptr);

  /// How many run directories are open; updates the empty state's text.
  void setOpenRunCount(int count);
  /// The empty state's headline, e.g. "Nothing to compare".
  QString emptyHeadline() const;

 private:
  EmptyState* m_empty = nullptr;
};

}  // namespace tb::app
