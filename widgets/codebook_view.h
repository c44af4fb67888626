#pragma once

#include <QList>
#include <QVector>
#include <QWidget>

class QComboBox;
class QCPGraph;
class QCPItemRect;
class QCPItemText;
class QCustomPlot;
class QLabel;
class QStackedWidget;

namespace tb::widgets {

class CurvePlot;

/// How a tokenizer uses its codebook, the first thing to look at when a run collapses:
///
/// - a histogram of how often validation used each code, codes sorted from most to least used,
///   on a logarithmic count axis, with the unused ("dead") codes shaded;
/// - the share of dead codes as a big number, with the used-code count and the perplexity of
///   the code distribution (exp of its entropy; equal to the codebook size when every code is
///   used equally often);
/// - perplexity and codebook usage over the run (valid/perplexity, valid/codebook_usage);
/// - a chooser of the validation step whose counts are shown.
///
/// The view holds no files: the owner feeds counts with setCounts() and answers stepRequested().
class CodebookView : public QWidget {
  Q_OBJECT

 public:
  explicit CodebookView(QWidget* parent = nullptr);
  ~CodebookView() override;

  /// Shows the code counts of the validation at `step` (one entry per code, >= 0).
  void setCounts(qint64 step, const QVector<qint64>& counts);
  /// The steps that have counts (the chooser's entries), any order. While the chooser shows
  /// the newest step (or nothing), a newer step is followed: stepRequested() asks for it.
  void setAvailableSteps(QList<qint64> steps);
  QList<qint64> availableSteps() const;
  /// Asks for the counts of `step` (what choosing it in the chooser does).
  void requestStep(qint64 step);
  /// True while the chooser is on the newest step (or empty), so new steps are followed.
  bool followsLatest() const;

  /// Adds a point to the perplexity / usage curves; `x` is the step or the elapsed time,
  /// `usage` is the share of codes used in [0, 1] (drawn in per cent).
  void appendPerplexity(double x, double perplexity);
  void appendUsage(double x, double usage);
  /// Sets the x axis label of both curves and whether x is a duration in seconds.
  void setCurvesXAxis(const QString& label, bool duration);
  /// Forgets counts, steps and curves.
  void clear();

  /// The step whose counts are shown, or -1.
  qint64 shownStep() const { return m_step; }
  /// Codes in the codebook (length of the shown counts), 0 when none are shown.
  int codebookSize() const { return static_cast<int>(m_sortedCounts.size()); }
  /// Codes used at least once, and the share of codes never used (NaN when none shown).
  qint64 usedCodes() const { return m_usedCodes; }
  double deadCodeShare() const;
  /// exp(entropy) of the shown counts (NaN when none shown or all zero).
  double perplexity() const { return m_perplexity; }
  /// The text of the big dead-code figure, e.g. "37.5 %".
  QString deadShareText() const;

  QCustomPlot* histogramPlot() const { return m_histogram; }
  QCPGraph* histogramGraph() const { return m_histogramGraph; }
  CurvePlot* perplexityPlot() const { return m_perplexityPlot; }
  CurvePlot* usagePlot() const { return m_usagePlot; }

 Q_SIGNALS:
  /// The view wants the counts of `step` (chosen by the user, or newer while following).
  void stepRequested(qint64 step);

 private:
  void updateFigures();
  void updateHistogram();

  QComboBox* m_stepChooser = nullptr;
  QLabel* m_deadShare = nullptr;
  QLabel* m_deadDetail = nullptr;
  QLabel* m_perplexityLabel = nullptr;
  QLabel* m_usedLabel = nullptr;
  QStackedWidget* m_histogramStack = nullptr;
  QLabel* m_histogramEmpty = nullptr;
  QCustomPlot* m_histogram = nullptr;
  QCPGraph* m_histogramGraph = nullptr;
  QCPItemRect* m_deadRegion = nullptr;
  QCPItemText* m_deadRegionLabel = nullptr;
  CurvePlot* m_perplexityPlot = nullptr;
  CurvePlot* m_usagePlot = nullptr;
  QList<qint64> m_steps;
  qint64 m_step = -1;
  QVector<qint64> m_sortedCounts;  // descending
  qint64 m_usedCodes = 0;
  double m_perplexity = 0.0;
};

}  // namespace tb::widgets
