#include "app/gui/run_control_bar.h"

#include "app/control/wire_text.h"
#include "app/gui/resume_target.h"
#include "app/text/duration_text.h"
#include "app/text/run_status_text.h"
#include "widgets/colours.h"
#include "widgets/elided_label.h"

#include <QApplication>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QStyle>
#include <QTemporaryFile>
#include <QTextBlock>
#include <QTextLayout>
#include <QTextOption>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtMath>

#include <cmath>
#include <utility>

namespace tb::app {
namespace {

constexpr int kAvailabilityPollMs = 1500;
// The progress bar narrows to kProgressMinWidth before the window would have to widen.
constexpr int kProgressWidth = 200;
constexpr int kProgressMinWidth = 90;
// Details take the height of their lines, between these (a longer text scrolls).
constexpr int kDetailsMinLines = 2;
constexpr int kDetailsMaxLines = 8;
// The state line's least width: enough for "Running", "Stopped" before an ellipsis.
constexpr int kStateMinWidth = 70;
// Same left and right margins as the pages, so the buttons line up with page titles.
constexpr int kHorizontalMargin = 24;

QString capitalized(QString text) {
  if (!text.isEmpty()) text[0] = text[0].toUpper();
  return text;
}

// "1 problem", "2 problems".
QString count(qint64 n, const QString& one, const QString& many) {
  return QStringLiteral("%1 %2").arg(n).arg(n == 1 ? one : many);
}

QString fromUtf8(const std::string& text) {
  return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

}  // namespace

RunControlBar::RunControlBar(RunController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_resumeTarget(new ResumeTarget(this)) {
  setObjectName(QStringLiteral("runControlBar"));
  QStyle* style = this->style();

  m_launch = new QPushButton(style->standardIcon(QStyle::SP_MediaPlay), tr("Launch"), this);
  m_launch->setObjectName(QStringLiteral("launchButton"));
  m_launch->setToolTip(tr("Start a new run with the Setup page's settings"));
  m_stop = new QPushButton(style->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this);
  m_stop->setObjectName(QStringLiteral("stopButton"));
  m_resume = new QPushButton(style->standardIcon(QStyle::SP_BrowserReload), tr("Resume"), this);
  m_resume->setObjectName(QStringLiteral("resumeButton"));
  m_checkpoint =
      new QPushButton(style->standardIcon(QStyle::SP_DialogSaveButton), tr("Checkpoint"), this);
  m_checkpoint->setObjectName(QStringLiteral("checkpointButton"));
  m_checkpoint->setToolTip(tr("Ask the trainer to write a checkpoint now"));

  m_stateDot = new QLabel(QStringLiteral("\u25cf"), this);
  m_state = new widgets::ElidedLabel(this);
  m_state->setObjectName(QStringLiteral("runState"));
  QFont bold = m_state->font();
  bold.setBold(true);
  m_state->setFont(bold);
  // Takes the room the row leaves and elides what does not fit (the full text is the tooltip).
  m_state->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  m_state->setMinimumTextWidth(kStateMinWidth);
  // A sentence such as what stopping does wraps onto a second line rather than being cut; the
  // row is always two lines tall, so that it never moves the page.
  m_state->setMaximumLines(2);

  m_warning = new widgets::ElidedLabel(this);
  m_warning->setObjectName(QStringLiteral("protocolWarning"));
  m_warning->setStyleSheet(QStringLiteral("color: %1;").arg(widgets::colours::pending().name()));
  m_warning->setSizePolicy(QSizePolicy::Maximum, QSizePolicy::Preferred);
  m_warning->hide();

  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("runProgress"));
  m_progress->setMinimumWidth(kProgressMinWidth);
  m_progress->setMaximumWidth(kProgressWidth);
  m_progress->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  m_progress->setTextVisible(true);
  m_progress->setAlignment(Qt::AlignCenter);
  m_progress->hide();
  m_rate = new widgets::ElidedLabel(this);
  m_rate->setObjectName(QStringLiteral("runRate"));
  m_rate->hide();

  m_detailsToggle = new QToolButton(this);
  m_detailsToggle->setObjectName(QStringLiteral("detailsToggle"));
  m_detailsToggle->setText(tr("Details"));
  m_detailsToggle->setCheckable(true);
  m_detailsToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  m_detailsToggle->setArrowType(Qt::RightArrow);
  m_detailsToggle->setAutoRaise(true);

  m_details = new QPlainTextEdit(this);
  m_details->setObjectName(QStringLiteral("runDetails"));
  m_details->setReadOnly(true);
  // Long lines (a path, an error with its hint) wrap: a horizontal scroll bar would cover
  // half of a short box.
  m_details->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  m_details->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  m_details->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_details->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  m_details->installEventFilter(this);
  m_details->hide();

  auto* row = new QHBoxLayout;
  row->setSpacing(6);
  row->addWidget(m_launch);
  row->addWidget(m_stop);
  row->addWidget(m_resume);
  row->addWidget(m_checkpoint);
  row->addSpacing(14);
  row->addWidget(m_stateDot);
  // Room to spare goes to the state line and the progress bar (up to its width), two to one.
  row->addWidget(m_state, 2);
  row->addWidget(m_warning);
  row->addSpacing(8);
  row->addWidget(m_progress, 1);
  row->addWidget(m_rate);
  row->addWidget(m_detailsToggle);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(kHorizontalMargin, 8, kHorizontalMargin, 8);
  layout->setSpacing(6);
  layout->addLayout(row);
  layout->addWidget(m_details);

  connect(m_launch, &QPushButton::clicked, this, [this] { launch(); });
  connect(m_stop, &QPushButton::clicked, this, &RunControlBar::stop);
  connect(m_resume, &QPushButton::clicked, this, [this] { resume(); });
  connect(m_checkpoint, &QPushButton::clicked, m_controller, &RunController::requestCheckpoint);
  connect(m_detailsToggle, &QToolButton::toggled, this, &RunControlBar::setDetailsVisible);

  connect(m_controller, &RunController::stateChanged, this, &RunControlBar::onStateChanged);
  connect(m_controller, &RunController::progressReceived, this, &RunControlBar::onProgress);
  connect(m_controller, &RunController::phaseReceived, this, &RunControlBar::onPhase);
  connect(m_controller, &RunController::finished, this, &RunControlBar::onFinished);
  connect(m_controller, &RunController::protocolWarning, this, &RunControlBar::onProtocolWarning);
  connect(m_controller, &RunController::helloReceived, this,
          [this] { Q_EMIT runDirectoryReady(m_controller->runDirectory()); });

  connect(m_resumeTarget, &ResumeTarget::readLanded, this, &RunControlBar::applyButtons);

  m_availability.setInterval(kAvailabilityPollMs);
  connect(&m_availability, &QTimer::timeout, this, &RunControlBar::refreshButtons);
  m_availability.start();

  onStateChanged(m_controller->state());
}

RunControlBar::~RunControlBar() = default;

void RunControlBar::setPlanner(Planner planner) { m_planner = std::move(planner); }

void RunControlBar::setResumeDirectoryProvider(DirectoryProvider provider) {
  m_resumeTarget->setDirectoryProvider(std::move(provider));
  refreshButtons();
}

void RunControlBar::setProblemsProvider(std::function<QStringList()> provider) {
  m_problems = std::move(provider);
}

QWidget* RunControlBar::takeDetailsView() {
  layout()->removeWidget(m_details);
  return m_details;
}

void RunControlBar::setTrainer(const QString& path, const QString& problem) {
  m_trainer = path;
  m_trainerProblem = problem;
  refreshButtons();
}

QString RunControlBar::resumeDirectory() const { return m_resumeTarget->directory(); }

QColor RunControlBar::colorFor(RunController::State state) {
  using State = RunController::State;
  namespace colours = widgets::colours;
  switch (state) {
    case State::Idle:
    case State::Stopped:
      return colours::idle();
    case State::Starting:
    case State::Stopping:
      return colours::pending();
    case State::Running:
      return colours::running();
    case State::Completed:
      return colours::done();
    case State::Unresponsive:
      return colours::attention();
    case State::FailedToStart:
    case State::Crashed:
    case State::Killed:
    case State::ExitedWithError:
    case State::ExitedWithoutDone:
      return colours::failed();
  }
  return {};
}

bool RunControlBar::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_details && event->type() == QEvent::Resize) {
    fitDetailsHeight();  // the lines wrap anew at the new width
  }
  return QWidget::eventFilter(watched, event);
}

// As tall as the wrapped text, kDetailsMinLines to kDetailsMaxLines lines (then it scrolls).
void RunControlBar::fitDetailsHeight() {
  // Laid out here, as the box will wrap them: its own layout of the text is lazy.
  const int documentMargin = static_cast<int>(m_details->document()->documentMargin());
  const QScrollBar* scrollBar = m_details->verticalScrollBar();
  const qreal width =
      qMax(40, m_details->width() - 2 * m_details->frameWidth() - 2 * documentMargin -
                   (scrollBar->isVisible() ? scrollBar->width() : 0));
  QTextOption wrap;
  wrap.setWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  int lines = 0;
  qreal textHeight = 0;
  for (QTextBlock block = m_details->document()->begin();
       block.isValid() && lines < kDetailsMaxLines; block = block.next()) {
    QTextLayout layout(block.text(), m_details->font());
    layout.setTextOption(wrap);
    layout.beginLayout();
    for (QTextLine line = layout.createLine(); line.isValid() && lines < kDetailsMaxLines;
         line = layout.createLine()) {
      line.setLineWidth(width);
      textHeight += line.height();
      ++lines;
    }
    layout.endLayout();
  }
  if (lines < kDetailsMinLines) {
    textHeight += (kDetailsMinLines - lines) * m_details->fontMetrics().lineSpacing();
  }
  const int margins = 2 * m_details->frameWidth() + 2 * documentMargin;
  const int height = qCeil(textHeight) + margins + 1;
  if (m_details->height() != height || m_details->minimumHeight() != height) {
    m_details->setFixedHeight(height);
  }
}

QString RunControlBar::textFor(RunController::State state) const {
  // While it runs, the progress bar and the rate carry the numbers.
  if (state == RunController::State::Running) {
    return tr("Running");
  }
  return capitalized(describeRun(m_controller->status()));
}

void RunControlBar::showState(const QString& text, const QColor& color) {
  m_color = color;
  m_state->setFullText(text);
  m_stateDot->setStyleSheet(QStringLiteral("color: %1; font-size: 15px;").arg(color.name()));
  m_state->setStyleSheet(QStringLiteral("color: %1;").arg(color.name()));
}

QString RunControlBar::stateText() const { return m_state->fullText(); }

QColor RunControlBar::stateColor() const { return m_color; }

QString RunControlBar::detailsText() const { return m_details->toPlainText(); }

bool RunControlBar::detailsVisible() const { return !m_details->isHidden(); }

void RunControlBar::setDetailsVisible(bool visible) {
  m_details->setVisible(visible);
  m_detailsToggle->setArrowType(visible ? Qt::DownArrow : Qt::RightArrow);
  if (m_detailsToggle->isChecked() != visible) {
    const QSignalBlocker blocker(m_detailsToggle);
    m_detailsToggle->setChecked(visible);
  }
}

QString RunControlBar::protocolWarningText() const {
  return m_warning->isHidden() ? QString() : m_warning->fullText();
}

void RunControlBar::showProblemsRefusal(const QStringList& problems) {
  showRefusal(tr("Cannot launch: %1 in the settings")
                  .arg(count(problems.size(), tr("problem"), tr("problems"))),
              problems);
  m_refusalFromProblems = true;
}

void RunControlBar::showRefusal(const QString& headline, const QStringList& lines) {
  m_refusal = headline;
  m_refusalFromProblems = false;
  showState(headline, colorFor(RunController::State::ExitedWithError));
  m_details->setPlainText(
      headline + QLatin1Char('\n') +
      (lines.isEmpty() ? QString() : QStringLiteral("\n  ") + lines.join(QStringLiteral("\n  "))));
  fitDetailsHeight();
  setDetailsVisible(true);
}

bool RunControlBar::launch() {
  if (m_controller->isActive()) {
    return false;
  }
  if (m_trainer.isEmpty()) {
    showRefusal(tr("Cannot launch: no tokenbench-trainer"),
                {m_trainerProblem.isEmpty() ? tr("Start tokenbench with --trainer PATH.")
                                            : m_trainerProblem});
    return false;
  }
  if (!m_planner) {
    showRefusal(tr("Cannot launch: no configuration"), {});
    return false;
  }
  LaunchPlan plan = m_planner();
  if (!plan.problems.isEmpty()) {
    showProblemsRefusal(plan.problems);
    return false;
  }
  if (plan.request.runDir().isEmpty()) {
    showRefusal(tr("Cannot launch: no run directory"),
                {tr("Choose the runs folder and a run name on the Setup page.")});
    return false;
  }
  if (plan.request.configFile().isEmpty()) {
    auto file = std::make_unique<QTemporaryFile>(
        QDir::temp().filePath(QStringLiteral("tokenbench-config-XXXXXX.json")));
    const QByteArray bytes = plan.configJson.toUtf8();
    if (!file->open() || file->write(bytes) != bytes.size() || !file->flush()) {
      showRefusal(tr("Cannot launch: cannot write the configuration"), {file->errorString()});
      return false;
    }
    file->close();
    plan.request.setConfigFile(file->fileName());
    m_configFile = std::move(file);  // kept for the process's life (until the next launch)
  }
  plan.request.command.resume = false;
  return startRequest(plan.request);
}

bool RunControlBar::resume() {
  if (m_controller->isActive()) {
    return false;
  }
  if (m_trainer.isEmpty()) {
    showRefusal(tr("Cannot resume: no tokenbench-trainer"), {m_trainerProblem});
    return false;
  }
  const QString dir = resumeDirectory();
  // The directory's state as last read off this thread (a read that has not landed yet counts
  // as no run: the Resume button is disabled until it does).
  if (dir.isEmpty() || dir != m_resumeTarget->readDirectory() || !m_resumeTarget->isResumable()) {
    showRefusal(
        tr("Cannot resume: no run to continue"),
        {dir.isEmpty() ? tr("Open a run directory first.")
                       : tr("%1 holds no config.json.").arg(QDir::toNativeSeparators(dir))});
    return false;
  }
  applyButtons();  // the run's state as last read
  if (!m_resume->isEnabled()) {
    showRefusal(tr("Cannot resume %1").arg(QFileInfo(dir).fileName()), {m_resume->toolTip()});
    return false;
  }
  LaunchRequest request;
  request.setRunDir(dir);
  request.command.resume = true;  // the trainer reads the run's own config.json
  return startRequest(request);
}

bool RunControlBar::startRequest(LaunchRequest request) {
  request.trainer = m_trainer;
  m_refusal.clear();
  m_launchStale = false;
  m_warning->hide();
  m_progress->hide();
  m_rate->hide();
  setDetailsVisible(false);
  // Whatever Details said (a refused launch, how the last run ended) is about another launch.
  m_details->setPlainText(tr("Started %1\n\nHow the run ends, with the trainer's last log lines, "
                             "appears here.")
                              .arg(shellCommandLine(request)));
  fitDetailsHeight();
  if (!m_controller->start(request)) {
    return false;
  }
  Q_EMIT runLaunched(m_controller->runDirectory());
  return true;
}

void RunControlBar::stop() {
  m_controller->stop();
  refreshButtons();
}

void RunControlBar::settingsChanged() {
  if (!m_refusal.isEmpty() && m_refusalFromProblems && m_problems) {
    const QStringList problems = m_problems();
    if (problems.isEmpty()) {
      m_refusal.clear();
      setDetailsVisible(false);
    } else {
      showProblemsRefusal(problems);
    }
  }
  if (!m_controller->isActive() && m_controller->state() != RunController::State::Idle &&
      !m_launchStale) {
    // The next launch is being prepared: how the last one ended gives way to the open run
    // (its Details stay one click away).
    m_launchStale = true;
    if (m_refusal.isEmpty()) setDetailsVisible(false);
  }
  refreshState();
}

void RunControlBar::openRunChanged() {
  if (!m_controller->isActive() && resumeDirectory() != m_controller->runDirectory()) {
    m_launchStale = true;
  }
  refreshButtons();
}

QString RunControlBar::openRunText(const RunSummary& run) {
  const QString step = run.step ? tr(" at step %1").arg(QLocale().toString(*run.step)) : QString();
  switch (run.status) {
    case RunSummary::Status::Running:
      return run.step ? tr("%1: running in another process, step %2")
                            .arg(run.name, QLocale().toString(*run.step))
                      : tr("%1: running in another process").arg(run.name);
    case RunSummary::Status::Completed:
      return tr("%1: completed%2").arg(run.name, step);
    case RunSummary::Status::Stopped:
      return tr("%1: stopped%2; Resume continues it").arg(run.name, step);
    case RunSummary::Status::Failed:
      return tr("%1: failed%2").arg(run.name, step);
    case RunSummary::Status::Interrupted:
      return tr("%1: interrupted%2; Resume continues from its last checkpoint").arg(run.name, step);
    case RunSummary::Status::New:
      return tr("%1: not started yet").arg(run.name);
  }
  return run.name;
}

void RunControlBar::refreshState() {
  if (!m_refusal.isEmpty()) return;  // stays until the settings are fixed or a run starts
  const RunController::State state = m_controller->state();
  if (m_controller->isActive() || (state != RunController::State::Idle && !m_launchStale)) {
    showState(textFor(state), colorFor(state));
    return;
  }
  if (const std::optional<RunSummary>& openRun = m_resumeTarget->summary()) {
    using Status = RunSummary::Status;
    using State = RunController::State;
    const Status status = openRun->status;
    const State like = status == Status::Running       ? State::Running
                       : status == Status::Completed   ? State::Completed
                       : status == Status::Failed      ? State::ExitedWithError
                       : status == Status::Interrupted ? State::Unresponsive
                                                       : State::Stopped;
    showState(openRunText(*openRun), colorFor(like));
    return;
  }
  // The last launch's ending gave way to new settings, and no run is open.
  showState(state == RunController::State::Idle ? textFor(state) : tr("No run open"),
            colorFor(RunController::State::Idle));
}

void RunControlBar::onStateChanged(RunController::State state) {
  m_refusal.clear();
  if (m_controller->isActive()) m_launchStale = false;
  showState(textFor(state), colorFor(state));
  if (!m_controller->isActive()) {
    // The state line says where it ended; the bar and rate of a finished run say nothing new.
    m_progress->hide();
    m_rate->hide();
  } else if (state == RunController::State::Stopping) {
    // No ETA once stopping: the state line takes the room to say what happens (the Monitor
    // still counts the steps).
    m_progress->hide();
    m_rate->hide();
  }
  refreshButtons();
}

void RunControlBar::onProgress(const core::ProgressEvent& progress) {
  const bool stopping = m_controller->state() == RunController::State::Stopping;
  if (progress.total > 0) {
    // QProgressBar counts in int; steps fit (a run of 2^31 steps is not a thing).
    m_progress->setRange(0, static_cast<int>(progress.total));
    m_progress->setValue(static_cast<int>(qMin(progress.step, progress.total)));
    m_progress->setFormat(QStringLiteral("%1 / %2").arg(progress.step).arg(progress.total));
    m_progress->setVisible(!stopping);
  }
  // The ETA first: where the row is short, the rate is what gets cut.
  QStringList parts;
  if (std::isfinite(progress.eta_s)) {
    parts << tr("ETA %1").arg(formatDuration(progress.eta_s));
  }
  if (std::isfinite(progress.it_per_s)) {
    parts << (progress.it_per_s >= 1 ? tr("%1 it/s").arg(progress.it_per_s, 0, 'f', 1)
                                     : tr("%1 it/s").arg(progress.it_per_s, 0, 'f', 2));
  }
  m_rate->setMinimumTextWidth(m_rate->fontMetrics().horizontalAdvance(parts.value(0)));
  m_rate->setFullText(parts.join(QStringLiteral(" \u00b7 ")));
  m_rate->setVisible(!parts.isEmpty() && !stopping);
}

// Before the first step's figures: what the trainer does, with its share done where it is
// counted and a busy bar where not.
void RunControlBar::onPhase(const core::PhaseEvent& phase) {
  if (phase.total > 0) {
    m_progress->setRange(0, 1000);
    m_progress->setValue(
        static_cast<int>(1000 * qBound<std::int64_t>(0, phase.done, phase.total) / phase.total));
    m_progress->setFormat(QStringLiteral("%p%"));
  } else {
    m_progress->setRange(0, 0);  // busy
  }
  m_progress->show();
  m_rate->setMinimumTextWidth(0);
  m_rate->setFullText(capitalized(fromUtf8(phase.text)));
  m_rate->show();
}

void RunControlBar::onProtocolWarning() {
  QStringList parts;
  if (m_controller->garbageLines() > 0) {
    parts << tr("%1 ignored")
                 .arg(count(static_cast<qint64>(m_controller->garbageLines()), tr("stdout line"),
                            tr("stdout lines")));
  }
  if (m_controller->rejectedPaths() > 0) {
    parts << tr("%1 outside the run ignored")
                 .arg(count(static_cast<qint64>(m_controller->rejectedPaths()), tr("path"),
                            tr("paths")));
  }
  m_warning->setFullText(QStringLiteral("\u26a0 ") + parts.join(QStringLiteral(", ")));
  m_warning->setFixedToolTip(m_controller->lastProtocolProblem());
  m_warning->show();
}

void RunControlBar::onFinished(RunController::State state) {
  QStringList lines{capitalized(describeRun(m_controller->status()))};
  if (const auto& error = m_controller->lastError()) {
    lines << QString() << tr("Error [%1]: %2").arg(fromUtf8(error->code), fromUtf8(error->message));
    if (!error->hint.empty()) {
      lines << tr("Hint: %1").arg(fromUtf8(error->hint));
    }
  }
  if (!m_controller->lastProtocolProblem().isEmpty()) {
    lines << QString()
          << tr("Protocol: %1 (last: %2)")
                 .arg(m_warning->fullText().mid(2), m_controller->lastProtocolProblem());
  }
  const QStringList tail = m_controller->stderrTail();
  if (!tail.isEmpty()) {
    lines << QString() << tr("Last lines of the trainer's log:");
    for (const QString& line : tail) {
      lines << QStringLiteral("  ") + line;
    }
  }
  m_details->setPlainText(lines.join(QLatin1Char('\n')));
  m_details->moveCursor(QTextCursor::End);
  fitDetailsHeight();
  if (RunController::isFailure(state)) {
    setDetailsVisible(true);
  }
}

// The buttons follow the controller at once and the resume directory's files as last read;
// the files are read again off this thread, and the buttons follow them when the read lands.
void RunControlBar::refreshButtons() {
  m_resumeTarget->refresh();
  applyButtons();
}

bool RunControlBar::waitForReads(int timeoutMs) { return m_resumeTarget->waitForReads(timeoutMs); }

void RunControlBar::applyButtons() {
  const bool active = m_controller->isActive();
  const RunController::State state = m_controller->state();
  if (state == RunController::State::Unresponsive) {
    showState(textFor(state), colorFor(state));  // "no output for ..." keeps counting
  }
  m_launch->setEnabled(!active);
  m_stop->setEnabled(active);
  const int stage = m_controller->stopStage();
  if (active && stage == 1) {
    m_stop->setText(tr("Force Stop"));
    m_stop->setToolTip(tr("The trainer was asked to stop; send it SIGTERM now"));
  } else if (active && stage >= 2) {
    m_stop->setText(tr("Kill"));
    m_stop->setToolTip(tr("Send SIGKILL now"));
  } else {
    m_stop->setText(tr("Stop"));
    m_stop->setToolTip(tr("Ask the trainer to stop cleanly (it writes a checkpoint)"));
  }
  const QString dir = resumeDirectory();
  // Until the first read of this directory lands, it counts as not resumable.
  const bool resumable = dir == m_resumeTarget->readDirectory() && m_resumeTarget->isResumable();
  if (dir != m_resumeTarget->readDirectory()) m_resumeTarget->forgetSummary();
  const std::optional<RunSummary>& openRun = m_resumeTarget->summary();
  // The window's own trainer holds the lock while it runs; anyone else's lock is another
  // process training the run, which a second trainer must not touch.
  const bool elsewhere = !active && openRun && openRun->status == RunSummary::Status::Running;
  const bool completed = openRun && openRun->status == RunSummary::Status::Completed;
  m_resume->setEnabled(!active && resumable && !elsewhere && !completed);
  const QString name = QDir::toNativeSeparators(dir);
  m_resume->setToolTip(
      !resumable  ? tr("Open a run directory to continue it")
      : elsewhere ? tr("%1 is being trained by another process").arg(name)
      : completed ? tr("%1 has completed all its steps: there is nothing to resume; start a new "
                       "run from its configuration (Monitor ▸ Configuration)")
                        .arg(name)
                  : tr("Continue %1 from its last checkpoint (Ctrl+R)").arg(name));
  m_checkpoint->setEnabled(
      (state == RunController::State::Running || state == RunController::State::Unresponsive) &&
      stage == 0);
  if (!active) refreshState();  // the open run's line follows its files
}

}  // namespace tb::app
