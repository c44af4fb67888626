#pragma once

#include "app/control/launch_request.h"
#include "app/control/run_controller.h"
#include "app/control/run_summary_reader.h"

#include <QString>
#include <QStringList>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTemporaryFile;
class QToolButton;

namespace tb::widgets {
class ElidedLabel;
}

namespace tb::app {

class ResumeTarget;

/// What Launch would start, as the window's Setup settings describe it.
struct LaunchPlan {
  LaunchRequest request;  ///< trainer (may be empty: the bar's trainer is used), config, run dir
  QStringList problems;   ///< why a launch must not start ("path: message"); empty when it may
  /// The configuration document, written to a temporary file kept while the process runs when
  /// request.configFile is empty.
  QString configJson;
};

/// The run-control bar above the pages: Launch, Stop, Resume and Checkpoint buttons, the run's
/// state in words and colour, a progress bar with rate and ETA, and a Details area that opens by
/// itself when a run ends badly (the error event with its hint, the trainer's last stderr lines)
/// or a launch is refused (the problems).
///
/// The bar drives a RunController it does not own. What Launch starts comes from a planner
/// function (the window asks the Setup page); Resume continues the run in the directory a second
/// function names (the run open in the window), with the run's own config.json.
///
/// The bar never widens the window: the state line, the rate and the warning elide to the room
/// the row leaves (whole in their tooltips), the progress bar narrows, and the ETA keeps its
/// room; Details wrap to the window's width and take the height of their lines (a few at most).
///
/// The state line says, in this order: the window's own trainer while it runs; why a launch was
/// refused (kept in step with the settings: it goes once they are fixed, see settingsChanged());
/// how the last launch ended, until the settings change or another run is opened; otherwise the
/// open run as its files say ("demo1: running in another process, step 120"), so a run started
/// elsewhere is never "No run started". Resume is offered only for an open run that can go on:
/// not while another process trains it (its lock is held), not once it has completed.
class RunControlBar : public QWidget {
  Q_OBJECT

 public:
  using Planner = std::function<LaunchPlan()>;
  using DirectoryProvider = std::function<QString()>;

  explicit RunControlBar(RunController* controller, QWidget* parent = nullptr);
  ~RunControlBar() override;

  /// What Launch starts. Without one, Launch says there is nothing to launch.
  void setPlanner(Planner planner);
  /// The run directory Resume continues (enabled while it holds a config.json).
  void setResumeDirectoryProvider(DirectoryProvider provider);
  /// Why a launch would be refused now ("path: message"), asked without side effects when the
  /// settings change while a refusal is shown.
  void setProblemsProvider(std::function<QStringList()> provider);
  /// Takes the Details area out of the bar, for the window to place below the pages (where it
  /// opening does not move what is under the mouse). The bar keeps driving it.
  QWidget* takeDetailsView();
  /// tokenbench-trainer to run; empty with `problem` when none was found.
  void setTrainer(const QString& path, const QString& problem = {});

  RunController* controller() const { return m_controller; }

  /// Starts a new run from the planner's plan. Returns false, and shows why in Details, when
  /// the trainer is missing, the plan has problems, or a run is already active.
  bool launch();
  /// Continues the run in the resume directory. False (with the reason shown) when impossible.
  bool resume();
  /// Runs the event loop until the resume directory's files read so far have been delivered,
  /// or `timeoutMs` passed; true when none is left. For tests: the window never waits.
  bool waitForReads(int timeoutMs = 10000);
  /// Stop (stop line); pressed again: SIGTERM; again: SIGKILL.
  void stop();
  /// The launch settings changed: a refusal is checked again (and goes when the problems are
  /// fixed), and how the last launch ended gives way to the open run.
  void settingsChanged();
  /// Another run was opened in the window: the state line follows it.
  void openRunChanged();

  /// The state line in full ("Running", "Stopping after the current step; ..."); the label
  /// may show it cut to its width.
  QString stateText() const;
  /// The colour the state is drawn in.
  QColor stateColor() const;
  /// The text of the Details area: why a launch was refused, the command a run started with,
  /// how it ended (error, hint, the trainer's last lines).
  QString detailsText() const;
  bool detailsVisible() const;
  void setDetailsVisible(bool visible);
  /// The warning label's text ("3 stdout lines ignored"); empty when there is nothing to say.
  QString protocolWarningText() const;

  QPushButton* launchButton() const { return m_launch; }
  QPushButton* stopButton() const { return m_stop; }
  QPushButton* resumeButton() const { return m_resume; }
  QPushButton* checkpointButton() const { return m_checkpoint; }
  QProgressBar* progressBar() const { return m_progress; }

  /// The colour a state is drawn in (green completed, red failures, ...).
  static QColor colorFor(RunController::State state);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 Q_SIGNALS:
  /// A run was started into `runDirectory` (absolute).
  void runLaunched(const QString& runDirectory);
  /// The trainer said hello: its run directory exists now and can be followed.
  void runDirectoryReady(const QString& runDirectory);

 private:
  void onStateChanged(RunController::State state);
  void onProgress(const core::ProgressEvent& progress);
  void onPhase(const core::PhaseEvent& phase);
  void onFinished(RunController::State state);
  void onProtocolWarning();
  void refreshButtons();
  void applyButtons();
  void refreshState();
  void showRefusal(const QString& headline, const QStringList& lines);
  void showProblemsRefusal(const QStringList& problems);
  void showState(const QString& text, const QColor& color);
  void fitDetailsHeight();
  QString textFor(RunController::State state) const;
  static QString openRunText(const RunSummary& run);
  QString resumeDirectory() const;
  bool startRequest(LaunchRequest request);

  RunController* m_controller = nullptr;
  Planner m_planner;
  QString m_trainer;
  QString m_trainerProblem;
  std::unique_ptr<QTemporaryFile> m_configFile;
  QString m_refusal;                   // the last refused launch, shown until the next state change
  bool m_refusalFromProblems = false;  // the refusal lists the settings' problems
  bool m_launchStale = false;          // the settings changed since the last launch ended
  std::function<QStringList()> m_problems;
  // The resume directory as its files last said (read off the window's thread).
  ResumeTarget* m_resumeTarget = nullptr;

  QPushButton* m_launch = nullptr;
  QPushButton* m_stop = nullptr;
  QPushButton* m_resume = nullptr;
  QPushButton* m_checkpoint = nullptr;
  QLabel* m_stateDot = nullptr;
  widgets::ElidedLabel* m_state = nullptr;
  widgets::ElidedLabel* m_warning = nullptr;
  QProgressBar* m_progress = nullptr;
  widgets::ElidedLabel* m_rate = nullptr;  // "ETA 4m18s · 12.5 it/s": the ETA is never cut
  QToolButton* m_detailsToggle = nullptr;
  QPlainTextEdit* m_details = nullptr;
  QTimer m_availability;
  QColor m_color;
};

}  // namespace tb::app
