#pragma once

#include <QStringList>
#include <QWidget>

class QStackedWidget;

namespace tb::app {

class CompareProcess;
class CompareReport;
class CompareReview;
class CompareSetupForm;
class EmptyState;

/// Compare: tokenizers side by side on the same clips. On the left, open a folder written by
/// `tokenbench-trainer compare`, or choose runs/checkpoints, data and clips and run the
/// comparison (its progress and errors shown there); on the right, the review: original | each
/// tokenizer playing in sync with metrics under each, a difference-heatmap toggle, the sortable
/// per-clip table and exports (CompareReview). An empty state says what would fill it.
class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(QWidget* parent = nullptr);
  ~ComparePage() override;

  /// The run directories open in the window: listed as tokenizers for a new comparison.
  void setRunDirectories(const QStringList& runs);
  /// The trainer `Compare` runs.
  void setTrainerPath(const QString& trainer);

  /// Loads the comparison in `directory` (its metrics.json) and shows it. On failure keeps what
  /// was shown, puts the reason under the Compare button and returns false.
  bool openCompareFolder(const QString& directory);
  /// When no review is shown yet: shows the newest comparison written into `run`'s compare/
  /// folder (compare/metrics.json or compare/<name>/metrics.json). False when there is none,
  /// it cannot be read, or a review is already shown.
  bool showLatestComparisonOf(const QString& run);
  /// Runs `tokenbench-trainer compare` for the form's request; the result opens when it
  /// succeeds. Returns false, with the reason shown, when the request is incomplete or a
  /// comparison is already running.
  bool startCompare();

  /// The empty state's headline, e.g. "Nothing to compare" (shown until a comparison loads).
  QString emptyHeadline() const;
  /// Whether the review (rather than the empty state) is shown.
  bool isShowingReview() const;

  CompareSetupForm* setupForm() const { return m_form; }
  CompareReview* review() const { return m_review; }
  CompareProcess* process() const { return m_process; }

 Q_SIGNALS:
  /// A comparison was loaded from `directory` (opened, or written by Compare).
  void compareFolderOpened(const QString& directory);
  /// A comparison run by Compare ended; `ok` with its result loaded.
  void compareFinished(bool ok);

 private:
  void chooseCompareFolder();
  void showReport(const CompareReport& report);
  void updateEmptyState();

  CompareSetupForm* m_form = nullptr;
  CompareReview* m_review = nullptr;
  CompareProcess* m_process = nullptr;
  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
  QStringList m_runs;
  bool m_failed = false;
};

}  // namespace tb::app
