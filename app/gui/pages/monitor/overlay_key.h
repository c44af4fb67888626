#pragma once

#include <QWidget>

class QLabel;
class QToolButton;

namespace tb::app {

class FollowedRuns;

/// The colour key of overlaid runs, on a line of its own above the Monitor's curves (it grows
/// with every run): each run's colour and name, and "Remove Overlays". Hidden while there is
/// no overlay.
class OverlayKey : public QWidget {
  Q_OBJECT

 public:
  explicit OverlayKey(QWidget* parent = nullptr);

  /// Shows the key of `runs`; hides it while only the open run (or none) is followed.
  void showRuns(const FollowedRuns& runs);

 Q_SIGNALS:
  /// "Remove Overlays" was clicked.
  void removeOverlaysClicked();

 private:
  QLabel* m_key = nullptr;
  QToolButton* m_remove = nullptr;
};

}  // namespace tb::app
