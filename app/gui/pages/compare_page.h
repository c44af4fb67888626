#pragma once

#include <QString>
#include <QWidget>

class QSplitter;
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
///
/// The page follows the run open in the window: opening a run shows that run's newest
/// comparison, or the empty state when it has none, and lists it first among the tokenizers.
class ComparePage : public QWidget {
  Q_OBJECT

 public:
  explicit ComparePage(QWidget* parent = nullptr);
  ~ComparePage() override;

  /// The run open in the window ("" none). When it changes, the review of the previous run
  /// goes, the form lists the run as a tokenizer (CompareSetupForm::setOpenRun), and its newest
  /// comparison (compare/metrics.json, compare/<name>/metrics.json, or a comparisons/<name>
  /// folder beside the run that names it) is looked for off the window's thread and shown when
  /// the read lands, unless the user opened a comparison, or another run, by then.
  void setOpenRun(const QString& run);
  QString openRun() const { return m_openRun; }
  /// The trainer `Compare` runs.
  void setTrainerPath(const QString& trainer);

  /// Loads the comparison in `directory` (its metrics.json) and shows it. On failure keeps what
  /// was shown, puts the reason under the Compare button and returns false.
  bool openCompareFolder(const QString& directory);
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

 protected:
  void showEvent(QShowEvent* event) override;

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
  QSplitter* m_splitter = nullptr;
  bool m_formPlaced = false;  // the splitter was sized for the page's first show
  QString m_openRun;
  // Bumped by every review shown and every run opened: a look for a run's newest comparison
  // that lands later shows nothing.
  quint64 m_reviewGeneration = 0;
  bool m_failed = false;
};

}  // namespace tb::app
