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
class FileReadThread;

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
  /// When no review is shown yet: looks for the newest comparison of `run` (compare/metrics.json,
  /// compare/<name>/metrics.json, or a comparisons/<name> folder beside the runs that names it)
  /// off the window's thread, and shows it when the read lands, unless a review is shown by
  /// then. Shows nothing when there is none or it cannot be read.
  void showLatestComparisonOf(const QString& run);
  /// Runs the event loop until the reads asked for so far have landed or `timeoutMs` passed
  /// (FileReadThread::waitForReads); true when none is left. For tests: the window never waits.
  bool waitForReads(int timeoutMs = 10000);
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
  FileReadThread* m_reads = nullptr;  // child: looks for a run's newest comparison
  EmptyState* m_empty = nullptr;
  QStackedWidget* m_stack = nullptr;
  QStringList m_runs;
  bool m_failed = false;
};

}  // namespace tb::app
