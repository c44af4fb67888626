// The window as a new user meets it (issue 22): each test drives the window the way that first
// session did, with real events where Qt offers them (clicks, key presses, wheel events, window
// sizes) and the fake trainer for runs that are killed, stopped and resumed, and checks that what
// went wrong there no longer does. Numbered as the issue numbers its findings.
#include "app/control/run_controller.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/compare_page.h"
#include "app/gui/pages/compare_review.h"
#include "app/gui/pages/compare_setup_form.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/run_progress_view.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/pages/samples_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/window_settings.h"
#include "core/event_protocol.h"
#include "core/version.h"
#include "tests/app/gui_test_support.h"
#include "tests/app/trainer_lock.h"
#include "widgets/clip_player.h"
#include "widgets/clip_timeline.h"
#include "widgets/curve_plot.h"
#include "widgets/qcustomplot_no_keywords.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>
#include <QTreeView>
#include <QWheelEvent>

#include <cmath>
#include <csignal>
#include <functional>

using tb::app::MainWindow;
using tb::app::PageId;
using tb::app::RunController;
using tb::app::RunProgressView;
using State = RunController::State;

namespace {

using tb::app::testing::clickButton;
using tb::app::testing::onNextDialog;
using tb::app::testing::writeFile;

constexpr int kTimeoutMs = 30000;
const QString kDataDir = QStringLiteral(TB_APP_TEST_DATA_DIR);

// A run directory as a trainer starts one: a folder with its config.json.
bool makeRun(const QString& dir, const QByteArray& config = "{}\n") {
  return writeFile(QDir(dir).filePath(QStringLiteral("config.json")), config);
}

QByteArray eventLine(const tb::core::Event& event) {
  return QByteArray::fromStdString(tb::core::encodeEvent(event) + "\n");
}

tb::core::HelloEvent hello() {
  tb::core::HelloEvent event;
  event.trainer_version = "0.1.0";
  event.protocol = tb::core::kProtocolVersion;
  return event;
}

// Types `folder` into a file dialog's name field, as a user would (whatever the dialog
// remembered from earlier sessions).
void chooseIn(QFileDialog* dialog, const QString& folder) {
  auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
  QVERIFY(name != nullptr);
  name->setText(folder);
}

// The question of a message box; "" for any other dialog.
QString textOf(QWidget* dialog) {
  auto* box = qobject_cast<QMessageBox*>(dialog);
  return box != nullptr ? box->text() : QString();
}

// Turns the mouse wheel by `notches` over `widget` at `at` (its coordinates), delivered as
// QApplication delivers the window system's wheel events: to the deepest widget there, then to
// its parents while each ignores it (a sent, not spontaneous, event would stop at the first).
void turnWheel(QWidget* widget, QPoint at, int notches, Qt::KeyboardModifiers modifiers = {}) {
  QWidget* window = widget->window();
  const QPoint inWindow = widget->mapTo(window, at);
  QWidget* target = window->childAt(inWindow);
  for (QWidget* w = target != nullptr ? target : window; w != nullptr; w = w->parentWidget()) {
    const QPoint local = w->mapFrom(window, inWindow);
    QWheelEvent event(local, w->mapToGlobal(local), QPoint(), QPoint(0, 120 * notches),
                      Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &event);
    if (event.isAccepted()) return;
  }
}

bool waitForEnd(RunController* controller) {
  QSignalSpy finished(controller, &RunController::finished);
  return !controller->isActive() || finished.wait(kTimeoutMs);
}

// Whether `widget` lies wholly inside its window.
bool insideWindow(const QWidget* widget) {
  const QWidget* window = widget->window();
  const QRect rect(widget->mapTo(window, QPoint(0, 0)), widget->size());
  return widget->isVisible() && window->rect().contains(rect);
}

QString describe(const QWidget* widget) {
  const QWidget* window = widget->window();
  const QRect rect(widget->mapTo(window, QPoint(0, 0)), widget->size());
  return QStringLiteral("%1 at %2,%3 %4x%5 in a %6x%7 window")
      .arg(widget->objectName())
      .arg(rect.x())
      .arg(rect.y())
      .arg(rect.width())
      .arg(rect.height())
      .arg(window->width())
      .arg(window->height());
}

}  // namespace

class FirstSessionTest : public QObject {
  Q_OBJECT

 private:
  // The window with the fake trainer, shown at `size`; Launch targets `runDir` if given.
  void prepare(MainWindow& window, QSize size = {1280, 800}, const QString& runDir = {}) {
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation trainer;
    trainer.path = QStringLiteral(TB_FAKE_TRAINER);
    trainer.origin = QStringLiteral("--trainer");
    window.setTrainerLocation(trainer);
    if (!runDir.isEmpty()) window.setupPage()->setRunDirectory(runDir);
    window.resize(size);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    // data-info answers before anything is launched (a launch waits for no one).
    QTRY_VERIFY(!window.setupPage()->dataInfoQuery()->isBusy());
  }

  // A copy of the real run kept in data/monitor_run, as `name` in `folder`.
  static QString copyRealRun(const QString& folder, const QString& name) {
    const QDir from(kDataDir + QStringLiteral("/monitor_run"));
    const QString to = QDir(folder).filePath(name);
    QDir().mkpath(to + QStringLiteral("/codebook"));
    for (const QString& file : from.entryList(QDir::Files)) {
      QFile::copy(from.filePath(file), QDir(to).filePath(file));
    }
    for (const QString& file :
         QDir(from.filePath(QStringLiteral("codebook"))).entryList(QDir::Files)) {
      QFile::copy(from.filePath(QStringLiteral("codebook/") + file),
                  QDir(to).filePath(QStringLiteral("codebook/") + file));
    }
    return to;
  }

  static bool addSample(const QString& run, const QString& fixture, const QString& name) {
    const QString samples = QDir(run).filePath(QStringLiteral("samples"));
    return QDir().mkpath(samples) &&
           QFile::copy(kDataDir + QLatin1Char('/') + fixture, QDir(samples).filePath(name));
  }

  // A run called `name` with one sample of four clips (step 100), open on the Samples page of
  // `window` at 1280x800. Returns the run's folder.
  QString openSamples(MainWindow& window, const QString& name) {
    const QString run = m_dir.filePath(name);
    if (!makeRun(run) ||
        !addSample(run, QStringLiteral("sample_step_a.gif"), QStringLiteral("step_100.gif"))) {
      qWarning("cannot write the run %s", qPrintable(run));
    }
    prepare(window);
    window.openRunDirectory(run);
    window.setCurrentPage(PageId::Samples);
    return run;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    tb::app::WindowSettings().clearRecentRuns();
  }

  void init() {
    qputenv("TB_FAKE_MODE", "normal");
    qunsetenv("TB_FAKE_STEPS");
    qunsetenv("TB_FAKE_STEP_MS");
  }

  // 1. Samples and Compare play their clips; a new sample keeps the frame the user chose.
  void clipsPlayAndANewSampleKeepsTheFrame() {
    MainWindow window;
    const QString run = openSamples(window, QStringLiteral("samples-run"));
    QCOMPARE(window.openRunDirectoryPath(), run);
    tb::widgets::ClipTimeline* timeline = window.samplesPage()->timeline();
    QVERIFY(timeline->frameCount() > 1);
    QVERIFY(timeline->isPlaying());
    QTRY_VERIFY(timeline->frameIndex() != 0);  // it moves on by itself

    // Paused with its button on frame 3; the next validation's sample keeps that frame.
    auto* playPause = timeline->findChild<QToolButton*>(QStringLiteral("playPause"));
    QTest::mouseClick(playPause, Qt::LeftButton);
    QVERIFY(!timeline->isPlaying());
    timeline->setFrameIndex(3);
    QVERIFY(addSample(run, QStringLiteral("sample_step_b.gif"), QStringLiteral("step_200.gif")));
    window.samplesPage()->rescan();
    QCOMPARE(window.samplesPage()->currentStep(), 200);
    QCOMPARE(timeline->frameIndex(), 3);
    QVERIFY(!timeline->isPlaying());
    // A still picture (a screenshot) shows the last frame, never the first.
    timeline->showStill();
    QCOMPARE(timeline->frameIndex(), timeline->frameCount() - 1);

    QVERIFY(window.comparePage()->openCompareFolder(kDataDir + QStringLiteral("/compare_demo")));
    QVERIFY(window.comparePage()->review()->timeline()->isPlaying());
  }

  // 2. A killed trainer: the Monitor stops saying "Running ... ETA" and raises an alert.
  void killedTrainerIsInterruptedOnTheMonitor() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    MainWindow window;
    prepare(window, {1280, 800}, m_dir.filePath(QStringLiteral("runs/killed")));
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    RunProgressView* view = window.monitorPage()->progressView();
    QTRY_COMPARE(view->state(), RunProgressView::State::Running);
    QVERIFY(view->text().contains(QLatin1String("ETA")));

    QVERIFY(::kill(static_cast<pid_t>(window.runController()->processId()), SIGKILL) == 0);
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Killed);
    // The follower reads the run's files off the window's thread: on a loaded machine the
    // reads that see the lock gone can take more than QTRY's default 5 s.
    QTRY_COMPARE_WITH_TIMEOUT(view->state(), RunProgressView::State::Interrupted, kTimeoutMs);
    QVERIFY2(!view->text().contains(QLatin1String("ETA")), qPrintable(view->text()));
    tb::app::AlertBanner* alerts = window.monitorPage()->alertBanner();
    QCOMPARE(alerts->alertCount(QStringLiteral("interrupted")), 1);
    QVERIFY(alerts->isVisible());
    QVERIFY(alerts->isCritical());
  }

  // 3. A folder that is not a run is refused; a folder of runs is browsed on Runs.
  void foldersThatAreNotRunsAreNotOpened() {
    const QString notARun = m_dir.filePath(QStringLiteral("docs"));
    QVERIFY(writeFile(notARun + QStringLiteral("/README"), "just files\n"));
    const QString runs = m_dir.filePath(QStringLiteral("folder-of-runs"));
    QVERIFY(makeRun(runs + QStringLiteral("/a")));
    QVERIFY(makeRun(runs + QStringLiteral("/b")));
    tb::app::WindowSettings().clearRecentRuns();
    MainWindow window;
    prepare(window);
    const QString target = window.setupPage()->runDirectory();

    // Through File > Open Run Directory, as the user did: a warning, and nothing changes.
    QString warning;
    onNextDialog([notARun, &warning](QWidget* dialog) {
      auto* files = qobject_cast<QFileDialog*>(dialog);
      if (files == nullptr) qobject_cast<QDialog*>(dialog)->reject();
      QVERIFY(files);
      chooseIn(files, notARun);
      onNextDialog([&warning](QWidget* box) {
        warning = textOf(box);
        qobject_cast<QDialog*>(box)->accept();
      });
      static_cast<QDialog*>(files)->accept();
    });
    window.findChild<QAction*>(QStringLiteral("openRunDirectoryAction"))->trigger();
    // The folder is read off the window's thread; the warning follows.
    QTRY_VERIFY2(warning.contains(QLatin1String("not a run directory")), qPrintable(warning));
    QVERIFY(window.openRunDirectoryPath().isEmpty());
    QVERIFY(tb::app::WindowSettings().recentRuns().isEmpty());
    QCOMPARE(window.setupPage()->runDirectory(), target);
    QVERIFY(window.runsPage()->runDirectories().isEmpty());
    QVERIFY(window.monitorPage()->runDirectory().isEmpty());

    // A folder of runs (what TensorBoard's --logdir takes): listed on the Runs page.
    QVERIFY(!window.openRunDirectory(runs));
    QVERIFY(window.lastOpenProblem().isEmpty());
    QCOMPARE(window.currentPage(), PageId::Runs);
    QCOMPARE(window.runsPage()->folder(), runs);
    QVERIFY(window.runsPage()->waitForReads());  // the folder is read off the window's thread
    QCOMPARE(window.runsPage()->rowCount(), 2);
    QVERIFY(window.statusBar()->currentMessage().contains(QLatin1String("2 runs")));
    QCOMPARE(window.setupPage()->runDirectory(), target);
    QVERIFY(tb::app::WindowSettings().recentRuns().isEmpty());
  }

  // 4. Everything that matters is on a 1024x640 screen.
  void fitsA1024x640Screen() {
    MainWindow window;
    const QSize smallest = window.minimumSizeHint();
    QVERIFY2(smallest.width() <= MainWindow::kMinimumWidth &&
                 smallest.height() <= MainWindow::kMinimumHeight,
             qPrintable(QStringLiteral("%1x%2").arg(smallest.width()).arg(smallest.height())));
    prepare(window, {MainWindow::kMinimumWidth, MainWindow::kMinimumHeight});
    QVERIFY(window.openRunDirectory(copyRealRun(m_dir.path(), QStringLiteral("small-screen"))));
    QCOMPARE(window.size(), QSize(MainWindow::kMinimumWidth, MainWindow::kMinimumHeight));

    window.setCurrentPage(PageId::Monitor);
    QTRY_VERIFY(window.monitorPage()->isShowingPlot());
    for (const char* name :
         {"runName", "runProgressText", "overlayRunButton", "detailsToggle", "resumeButton"}) {
      QWidget* page = QByteArray(name).startsWith("run") || QByteArray(name).startsWith("overlay")
                          ? static_cast<QWidget*>(window.monitorPage())
                          : static_cast<QWidget*>(window.runControlBar());
      auto* widget = page->findChild<QWidget*>(QString::fromLatin1(name));
      QVERIFY2(widget != nullptr, name);
      QVERIFY2(insideWindow(widget), qPrintable(describe(widget)));
    }
    // Every plot in view is whole across: the grid takes as many columns as fit.
    for (const QString& id : window.monitorPage()->shownPanelIds()) {
      tb::widgets::CurvePlot* plot = window.monitorPage()->panel(id);
      const int right = plot->mapTo(&window, QPoint(plot->width(), 0)).x();
      QVERIFY2(right <= window.width(), qPrintable(describe(plot)));
    }
    window.setCurrentPage(PageId::Compare);
    QTest::qWait(50);
    auto* compare = window.comparePage()->findChild<QPushButton*>(QStringLiteral("runCompare"));
    const int compareRight = compare->mapTo(&window, QPoint(compare->width(), 0)).x();
    QVERIFY2(compareRight <= window.width(), qPrintable(describe(compare)));
    window.setCurrentPage(PageId::Setup);
    QTest::qWait(50);
    for (const char* name : {"runName", "presetBox", "saveButton"}) {
      auto* widget = window.setupPage()->findChild<QWidget*>(QString::fromLatin1(name));
      QVERIFY2(insideWindow(widget), qPrintable(describe(widget)));
    }
  }

  // 5. Compare's output goes beside the open run when it is compared, else beside the first
  // tokenizer listed now, and never inside a run.
  void compareWritesBesideTheRunsItCompares() {
    const QString runs = m_dir.filePath(QStringLiteral("compare-runs"));
    const QString failed = runs + QStringLiteral("/failed");
    const QString good = runs + QStringLiteral("/good");
    const QString elsewhere = m_dir.filePath(QStringLiteral("elsewhere/runs/other"));
    for (const QString& run : {failed, good, elsewhere}) QVERIFY(makeRun(run));
    MainWindow window;
    prepare(window);
    for (const QString& run : {failed, good, elsewhere}) QVERIFY(window.openRunDirectory(run));
    window.setCurrentPage(PageId::Compare);
    tb::app::CompareSetupForm* form = window.comparePage()->setupForm();
    QCOMPARE(form->entries().size(), 1);  // the open run, not every run opened before
    form->addEntry(failed);
    form->addEntry(good);
    QVERIFY(form->waitForReads());
    const QString besideOpen = m_dir.filePath(QStringLiteral("elsewhere/runs/comparisons/"));
    QVERIFY2(form->effectiveOutputDirectory().startsWith(besideOpen),
             qPrintable(form->effectiveOutputDirectory()));

    // Remove the open run with the buttons: the output follows the first tokenizer left.
    auto* table = form->findChild<QTableView*>(QStringLiteral("compareEntries"));
    auto* remove = form->findChild<QPushButton*>(QStringLiteral("removeCompareEntry"));
    table->selectRow(0);
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(form->entries().size(), 2);
    QVERIFY(form->waitForReads());
    const QString output = form->effectiveOutputDirectory();
    QVERIFY2(output.startsWith(runs + QStringLiteral("/comparisons/")), qPrintable(output));
    for (const QString& run : {failed, good, elsewhere}) {
      QVERIFY2(!output.startsWith(run + QLatin1Char('/')), qPrintable(output));
    }
    // A checkpoint inside a run: beside that run too.
    QCOMPARE(
        tb::app::CompareSetupForm::folderOutsideRuns(good + QStringLiteral("/checkpoints/step_3")),
        runs);
  }

  // 6. What data-info finds wrong is a problem: no green line, no launch.
  void dataProblemsBlockTheLaunch() {
    QTemporaryDir scripts;
    const QString trainer = scripts.filePath(QStringLiteral("trainer"));
    QVERIFY(writeFile(trainer,
                      "#!/bin/sh\n"
                      "case \"$1\" in\n"
                      "  data-info) echo 'tokenbench-trainer data-info: data.path \"/nowhere\" is "
                      "not a folder' >&2; exit 2 ;;\n"
                      "  *) echo '{}' ;;\n"
                      "esac\n"));
    QFile::setPermissions(trainer,
                          QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    MainWindow window;
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation location;
    location.path = trainer;
    window.setTrainerLocation(location);
    window.setupPage()->setRunDirectory(m_dir.filePath(QStringLiteral("runs/no-data")));
    tb::app::SetupPage* setup = window.setupPage();
    setup->setValue(QStringLiteral("data.type"), "videos");
    setup->setValue(QStringLiteral("data.path"), "/nowhere");
    QTRY_VERIFY(!setup->dataInfoQuery()->isBusy());
    QVERIFY2(!setup->validationSummaryText().contains(QLatin1String("No problems")),
             qPrintable(setup->validationSummaryText()));
    const QStringList problems = setup->validationErrors();
    QVERIFY2(problems.size() == 1 && problems[0].startsWith(QLatin1String("data.path: ")) &&
                 problems[0].contains(QLatin1String("not a folder")),
             qPrintable(problems.join('\n')));
    QVERIFY(!window.runControlBar()->launch());
    QVERIFY(window.runControlBar()->detailsText().contains(QLatin1String("not a folder")));
    QCOMPARE(window.runController()->state(), State::Idle);
  }

  // 7. The wheel scrolls the page: values and plots stay as they are.
  void wheelScrollsThePageNotTheValues() {
    MainWindow window;
    prepare(window, {MainWindow::kMinimumWidth, MainWindow::kMinimumHeight});
    tb::app::SetupPage* setup = window.setupPage();
    setup->showPanel(tb::app::SetupPage::Panel::Dataset);
    auto* size =
        qobject_cast<QSpinBox*>(setup->fieldEditor(QStringLiteral("data.image_size"))->input());
    auto* prefetch =
        qobject_cast<QSpinBox*>(setup->fieldEditor(QStringLiteral("data.prefetch"))->input());
    auto* scroll = qobject_cast<QScrollArea*>(
        setup->findChild<QTabWidget*>(QStringLiteral("setupTabs"))->currentWidget());
    QVERIFY(scroll && scroll->verticalScrollBar()->maximum() > 0);
    const int imageSize = size->value();
    const int prefetchValue = prefetch->value();
    scroll->ensureWidgetVisible(size);
    const int before = scroll->verticalScrollBar()->value();
    QVERIFY2(before < scroll->verticalScrollBar()->maximum(), "nothing left to scroll");
    turnWheel(size, size->rect().center(), -1);
    QCOMPARE(size->value(), imageSize);
    QVERIFY(scroll->verticalScrollBar()->value() > before);  // the page scrolled instead
    scroll->ensureWidgetVisible(prefetch);
    turnWheel(prefetch, prefetch->rect().center(), -2);
    QCOMPARE(prefetch->value(), prefetchValue);
    // Clicked into, the input takes the wheel.
    scroll->ensureWidgetVisible(size);
    QTest::mouseClick(size, Qt::LeftButton, {}, QPoint(8, size->height() / 2));
    QVERIFY(size->hasFocus());
    turnWheel(size, size->rect().center(), 1);
    QCOMPARE(size->value(), imageSize + 1);

    // Over a plot: the page scrolls; Ctrl zooms, and never to negative steps.
    QVERIFY(window.openRunDirectory(copyRealRun(m_dir.path(), QStringLiteral("wheel"))));
    window.setCurrentPage(PageId::Monitor);
    QTRY_VERIFY(window.monitorPage()->isShowingPlot());
    tb::widgets::CurvePlot* loss = window.monitorPage()->curvePlot();
    loss->replotNow();
    QCustomPlot* plot = loss->customPlot();
    auto* grid = window.monitorPage()->findChild<QScrollArea*>(QStringLiteral("curveGrid"));
    QVERIFY(grid->verticalScrollBar()->maximum() > 0);
    const QCPRange range = plot->xAxis->range();
    const int gridBefore = grid->verticalScrollBar()->value();
    turnWheel(plot, plot->rect().center(), -1);
    QCOMPARE(plot->xAxis->range().lower, range.lower);
    QCOMPARE(plot->xAxis->range().upper, range.upper);
    QVERIFY(grid->verticalScrollBar()->value() > gridBefore);
    grid->verticalScrollBar()->setValue(0);
    for (int i = 0; i < 8; ++i)
      turnWheel(plot, QPoint(plot->width() / 2, 40), -1, Qt::ControlModifier);
    QVERIFY(plot->xAxis->range().size() > range.size());  // zoomed out
    QVERIFY2(plot->xAxis->range().lower >= -0.02 * plot->xAxis->range().size(),
             qPrintable(QString::number(plot->xAxis->range().lower)));
  }

  // 8. Overlaid runs: a colour each, one legend entry per metric, runs picked on Runs.
  void overlaysKeepPlotsReadable() {
    const QString runs = m_dir.filePath(QStringLiteral("overlay-runs"));
    const QString a = copyRealRun(runs, QStringLiteral("a"));
    const QString b = copyRealRun(runs, QStringLiteral("b"));
    MainWindow window;
    prepare(window);
    QVERIFY(window.openRunDirectory(a));
    window.setCurrentPage(PageId::Monitor);
    tb::widgets::CurvePlot* loss = window.monitorPage()->curvePlot();
    QTRY_VERIFY(window.monitorPage()->isShowingPlot());
    loss->replotNow();
    const int entries = loss->legendEntryCount();
    QVERIFY(entries > 0);
    const int axisHeight = loss->customPlot()->axisRect()->height();
    window.runsPage()->setFolder(runs);
    QVERIFY(window.runsPage()->waitForReads());
    window.setCurrentPage(PageId::Runs);

    window.runsPage()->selectRuns({b});
    auto* overlay = window.runsPage()->findChild<QPushButton*>(QStringLiteral("overlayRuns"));
    QVERIFY(overlay->isEnabled());
    QTest::mouseClick(overlay, Qt::LeftButton);
    QCOMPARE(window.currentPage(), PageId::Monitor);
    QCOMPARE(window.monitorPage()->overlayRuns(), QStringList{b});
    QTRY_VERIFY(
        loss->pointCount(window.monitorPage()->seriesName(1, QStringLiteral("train/loss"))) > 0);
    loss->replotNow();
    QCOMPARE(loss->legendEntryCount(), entries);  // not doubled
    QVERIFY2(loss->customPlot()->axisRect()->height() >= axisHeight - 2,
             qPrintable(QString::number(loss->customPlot()->axisRect()->height())));
    const QString name = QStringLiteral("train/loss");
    QVERIFY(loss->seriesColor(name) !=
            loss->seriesColor(window.monitorPage()->seriesName(1, name)));
  }

  // 9. Samples: Fit fills the page; 2x and 4x scroll the page, not each clip.
  void samplesZoomScrollsThePage() {
    MainWindow window;
    openSamples(window, QStringLiteral("zoom-run"));
    tb::app::SamplesPage* samples = window.samplesPage();
    QVERIFY(samples->isShowingSamples());
    QCOMPARE(samples->players().size(), 8);  // four clips, original and reconstruction
    QTRY_VERIFY2(samples->players().front()->width() >= 180,
                 qPrintable(QString::number(samples->players().front()->width())));
    for (tb::widgets::ClipPlayer* player : samples->players()) {
      QVERIFY2(insideWindow(player), qPrintable(describe(player)));  // every clip in view
    }
    auto* zoom = samples->findChild<QComboBox*>(QStringLiteral("zoom"));
    for (int factor : {2, 4}) {
      zoom->setCurrentIndex(zoom->findText(QStringLiteral("%1x").arg(factor)));
      QTest::qWait(30);
      for (tb::widgets::ClipPlayer* player : samples->players()) {
        QCOMPARE(player->width(), player->frameSize().width() * factor);
        auto* own = player->findChild<QScrollArea*>(QStringLiteral("clipScroll"));
        QVERIFY(!own->horizontalScrollBar()->isVisible());
        QVERIFY(!own->verticalScrollBar()->isVisible());
      }
    }
    QVERIFY(samples->clipColumns() > 1);  // clips side by side where the page is wide enough
  }

  // 10. A run started elsewhere: the bar says so, Resume is offered only when it can work,
  // and its configuration is on view.
  void runsStartedElsewhere() {
    const QString runs = m_dir.filePath(QStringLiteral("elsewhere-runs"));
    const QByteArray config = "{\"version\": 1, \"train\": {\"max_steps\": 77}}\n";
    const QString live = runs + QStringLiteral("/live");
    const QString completed = runs + QStringLiteral("/completed");
    const QString stopped = runs + QStringLiteral("/stopped");
    for (const QString& run : {live, completed, stopped}) {
      QVERIFY(makeRun(run, config));
      QVERIFY(writeFile(run + QStringLiteral("/metrics.jsonl"),
                        "{\"step\":12,\"wall_time\":1700000000.0,\"train/loss\":0.5}\n"));
    }
    QVERIFY(writeFile(live + QStringLiteral("/events.jsonl"),
                      eventLine(hello()) + eventLine(tb::core::ProgressEvent{12, 77, 2.0, 32.0})));
    QVERIFY(writeFile(completed + QStringLiteral("/events.jsonl"),
                      eventLine(hello()) + eventLine(tb::core::DoneEvent{"completed", 77})));
    QVERIFY(writeFile(stopped + QStringLiteral("/events.jsonl"),
                      eventLine(hello()) + eventLine(tb::core::DoneEvent{"stopped", 12})));
    const tb::test::TrainerLock otherProcess(live);
    MainWindow window;
    prepare(window);
    tb::app::RunControlBar* bar = window.runControlBar();

    QVERIFY(window.openRunDirectory(live));
    QVERIFY(window.monitorPage()->waitForReads());
    QTRY_VERIFY2(bar->stateText().contains(QLatin1String("running in another process")),
                 qPrintable(bar->stateText()));
    QCOMPARE(window.monitorPage()->progressView()->state(), RunProgressView::State::Running);
    QVERIFY(!bar->resumeButton()->isEnabled());
    QVERIFY(bar->resumeButton()->toolTip().contains(QLatin1String("another process")));

    QVERIFY(window.openRunDirectory(completed));
    QVERIFY(window.monitorPage()->waitForReads());
    QTRY_VERIFY(bar->stateText().contains(QLatin1String("completed")));
    QVERIFY(!bar->resumeButton()->isEnabled());

    QVERIFY(window.openRunDirectory(stopped));
    QVERIFY(window.monitorPage()->waitForReads());
    QTRY_VERIFY(bar->resumeButton()->isEnabled());
    QVERIFY(bar->stateText().contains(QLatin1String("stopped")));

    // Its configuration, and a new run from it.
    tb::app::MonitorPage* monitor = window.monitorPage();
    monitor->setCurrentTab(2);
    QVERIFY(monitor->configurationText().contains(QLatin1String("\"max_steps\": 77")));
    auto* fromConfig = monitor->findChild<QPushButton*>(QStringLiteral("newRunFromConfiguration"));
    window.setCurrentPage(PageId::Monitor);
    QTest::mouseClick(fromConfig, Qt::LeftButton);
    QCOMPARE(window.currentPage(), PageId::Setup);
    QCOMPARE(window.setupPage()->value(QStringLiteral("train.max_steps")).get<int>(), 77);
    QVERIFY(window.setupPage()->configText().contains(QLatin1String("stopped")));
    QVERIFY(window.setupPage()->runDirectory() != stopped);
  }

  // 12. Messages that no longer hold go: a refusal once fixed, a failed launch once the next is
  // being prepared; the quit question keeps counting.
  void staleMessagesGo() {
    MainWindow window;
    prepare(window, {1280, 800}, m_dir.filePath(QStringLiteral("runs/stale")));
    tb::app::RunControlBar* bar = window.runControlBar();
    tb::app::SetupPage* setup = window.setupPage();
    setup->showPanel(tb::app::SetupPage::Panel::Training);
    auto* steps =
        qobject_cast<QSpinBox*>(setup->fieldEditor(QStringLiteral("train.max_steps"))->input());
    steps->setFocus();
    steps->selectAll();
    QTest::keyClicks(steps, QStringLiteral("-5"));
    QTest::keyClick(steps, Qt::Key_Tab);
    QTest::mouseClick(bar->launchButton(), Qt::LeftButton);
    QCOMPARE(bar->stateText(), QStringLiteral("Cannot launch: 1 problem in the settings"));
    steps->setFocus();
    steps->selectAll();
    QTest::keyClicks(steps, QStringLiteral("40"));
    QTest::keyClick(steps, Qt::Key_Tab);
    QVERIFY2(!bar->stateText().startsWith(QLatin1String("Cannot launch")),
             qPrintable(bar->stateText()));
    QVERIFY(!bar->detailsVisible());

    // A launch that fails, then another preset and name: the failure is no longer the news.
    // (The settings launched are kept in the run's .config.json: no question about them.)
    qputenv("TB_FAKE_MODE", "usage");
    QTest::mouseClick(bar->launchButton(), Qt::LeftButton);
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::ExitedWithError);
    const QString failure = bar->stateText();
    auto* presets = setup->findChild<QComboBox*>(QStringLiteral("presetBox"));
    presets->setFocus();
    QString asked;
    onNextDialog([&asked](QWidget* dialog) {
      asked = textOf(dialog);
      qobject_cast<QDialog*>(dialog)->reject();  // the folder quick-start asks for
    });
    QTest::keyClick(presets, Qt::Key_Down);
    QVERIFY2(asked.isEmpty(), qPrintable(asked));
    QCOMPARE(setup->presetName(), QStringLiteral("quick-start"));
    auto* name = setup->findChild<QLineEdit*>(QStringLiteral("runName"));
    name->setFocus();
    name->selectAll();
    QTest::keyClicks(name, QStringLiteral("second-try"));
    QVERIFY2(bar->stateText() != failure, qPrintable(bar->stateText()));
    QVERIFY(!bar->detailsVisible());

    // The quit question follows the run while it is open.
    qputenv("TB_FAKE_MODE", "normal");
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(bar->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    QString first;
    QString later;
    onNextDialog([&first, &later](QWidget* box) {
      first = textOf(box);
      QTest::qWait(600);
      later = textOf(box);
      clickButton(box, QStringLiteral("Cancel"));
    });
    QVERIFY(!window.close());
    QVERIFY2(first.startsWith(QLatin1String("A run is in progress (running, step")),
             qPrintable(first));
    QVERIFY2(later != first, qPrintable(later));
    bar->stop();
    QVERIFY(waitForEnd(window.runController()));
  }

  // 13. Neither the problem list nor Details moves what is under the mouse.
  void problemsAndDetailsDoNotMoveTheFields() {
    MainWindow window;
    prepare(window, {1280, 800}, m_dir.filePath(QStringLiteral("runs/steady")));
    tb::app::SetupPage* setup = window.setupPage();
    setup->showPanel(tb::app::SetupPage::Panel::Training);
    QWidget* lr = setup->fieldEditor(QStringLiteral("train.lr"))->input();
    const QPoint before = lr->mapTo(&window, QPoint(0, 0));
    setup->setValue(QStringLiteral("train.max_steps"), -5);
    setup->setValue(QStringLiteral("train.batch_size"), 0);
    auto* problems = setup->findChild<QListWidget*>(QStringLiteral("problemList"));
    QTRY_VERIFY(problems->isVisible());
    QCOMPARE(problems->count(), 2);
    QCOMPARE(lr->mapTo(&window, QPoint(0, 0)), before);

    QWidget* pages = window.findChild<QWidget*>(QStringLiteral("pages"));
    const QPoint pagesAt = pages->mapTo(&window, QPoint(0, 0));
    QTest::mouseClick(window.findChild<QToolButton*>(QStringLiteral("detailsToggle")),
                      Qt::LeftButton);
    QVERIFY(window.runControlBar()->detailsVisible());
    QTest::qWait(20);
    QCOMPARE(pages->mapTo(&window, QPoint(0, 0)), pagesAt);
    QCOMPARE(lr->mapTo(&window, QPoint(0, 0)), before);
  }

  // 14. A typed value out of range is kept and marked, not silently put back.
  void typedValuesOutOfRangeAreMarked() {
    MainWindow window;
    prepare(window);
    tb::app::SetupPage* setup = window.setupPage();
    setup->showPanel(tb::app::SetupPage::Panel::Training);
    tb::app::ConfigFieldEditor* editor = setup->fieldEditor(QStringLiteral("train.batch_size"));
    auto* spin = qobject_cast<QSpinBox*>(editor->input());
    QTest::mouseClick(spin, Qt::LeftButton, {}, QPoint(8, spin->height() / 2));
    spin->selectAll();
    QTest::keyClicks(spin, QStringLiteral("0"));
    QTest::keyClick(spin, Qt::Key_Tab);
    QCOMPARE(spin->text(), QStringLiteral("0"));
    QCOMPARE(setup->value(QStringLiteral("train.batch_size")).get<int>(), 0);
    QVERIFY2(editor->error().contains(QLatin1String(">= 1")), qPrintable(editor->error()));
    QVERIFY(setup->problemListText().join('\n').contains(QLatin1String("train.batch_size")));
    // The arrows still stop at the range.
    spin->setValue(1);
    QTest::keyClick(spin, Qt::Key_Down);
    QCOMPARE(spin->value(), 1);
  }

  // 15. Presets: described in the list, edits kept unless the user agrees, footage asked for.
  void presetChooserAsksFirst() {
    MainWindow window;
    prepare(window);
    tb::app::SetupPage* setup = window.setupPage();
    auto* presets = setup->findChild<QComboBox*>(QStringLiteral("presetBox"));
    // The open list shows each preset's description.
    const QModelIndex demo = presets->model()->index(presets->findData(QStringLiteral("demo")), 0);
    const QString description = demo.data(Qt::ToolTipRole).toString();
    QStyleOptionViewItem option;
    option.initFrom(presets->view());
    option.font = presets->view()->font();
    const int shown = presets->view()->itemDelegate()->sizeHint(option, demo).width();
    QVERIFY2(shown > QFontMetrics(option.font).horizontalAdvance(description),
             qPrintable(QString::number(shown)));

    setup->showPanel(tb::app::SetupPage::Panel::Training);
    auto* lr = qobject_cast<QLineEdit*>(setup->fieldEditor(QStringLiteral("train.lr"))->input());
    QTest::mouseClick(lr, Qt::LeftButton);
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("0.002"));
    QVERIFY(setup->isModified());
    // Another preset: the question; Cancel keeps everything.
    QString question;
    onNextDialog([&question](QWidget* box) {
      question = textOf(box);
      clickButton(box, QStringLiteral("Cancel"));
    });
    presets->setFocus();
    QTest::keyClick(presets, Qt::Key_Down);
    QVERIFY2(question.contains(QLatin1String("Discard")), qPrintable(question));
    QCOMPARE(setup->presetName(), QStringLiteral("demo"));
    QCOMPARE(presets->currentText(), QStringLiteral("demo"));
    QCOMPARE(setup->value(QStringLiteral("train.lr")).get<double>(), 0.002);

    // quick-start is for your own footage: discard, then the folder is asked for.
    const QString footage = m_dir.filePath(QStringLiteral("footage"));
    QVERIFY(QDir().mkpath(footage));
    onNextDialog([footage](QWidget* box) {
      clickButton(box, QStringLiteral("Discard Changes"));
      onNextDialog([footage](QWidget* dialog) {
        auto* files = qobject_cast<QFileDialog*>(dialog);
        if (files == nullptr) qobject_cast<QDialog*>(dialog)->reject();
        QVERIFY(files);
        QVERIFY(files->windowTitle().contains(QLatin1String("videos")));
        chooseIn(files, footage);
        static_cast<QDialog*>(files)->accept();
      });
    });
    QTest::keyClick(presets, Qt::Key_Down);  // the next preset: quick-start
    QCOMPARE(setup->presetName(), QStringLiteral("quick-start"));
    QCOMPARE(QString::fromStdString(setup->value(QStringLiteral("data.type")).get<std::string>()),
             QStringLiteral("videos"));
    QCOMPARE(QString::fromStdString(setup->value(QStringLiteral("data.path")).get<std::string>()),
             footage);
  }

  // 16. Plots: a curve drawn once, a spike left out, whole steps, stops not counted as time.
  void plotsShowWhatTheRunDid() {
    const QString run = m_dir.filePath(QStringLiteral("plots-run"));
    QVERIFY(makeRun(run));
    QByteArray metrics;
    const double start = 1700000000.0;
    for (int step = 1; step <= 12; ++step) {
      // Stopped after step 6, resumed an hour later.
      const double wall = start + 2.0 * step + (step > 6 ? 3600.0 : 0.0);
      const double recon = 1.0 / step;
      const double loss = step == 4 ? 500.0 : 0.5 + recon;  // one spike
      metrics += QStringLiteral(
                     "{\"step\":%1,\"wall_time\":%2,\"train/loss\":%3,\"train/recon_loss\":%4,"
                     "\"train/recon_l1\":%4}\n")
                     .arg(step)
                     .arg(wall, 0, 'f', 3)
                     .arg(loss, 0, 'g', 17)
                     .arg(recon, 0, 'g', 17)
                     .toUtf8();
    }
    QVERIFY(writeFile(run + QStringLiteral("/metrics.jsonl"), metrics));
    QVERIFY(writeFile(run + QStringLiteral("/events.jsonl"),
                      eventLine(hello()) + eventLine(tb::core::DoneEvent{"stopped", 6}) +
                          eventLine(hello()) + eventLine(tb::core::DoneEvent{"completed", 12})));
    MainWindow window;
    prepare(window);
    QVERIFY(window.openRunDirectory(run));
    window.setCurrentPage(PageId::Monitor);
    tb::app::MonitorPage* monitor = window.monitorPage();
    QTRY_VERIFY(monitor->isShowingPlot());
    tb::widgets::CurvePlot* loss = monitor->curvePlot();
    loss->replotNow();
    // recon_l1 repeats recon_loss: drawn once, named with both.
    QVERIFY(loss->isSeriesVisible(QStringLiteral("train/recon_loss")));
    QVERIFY(!loss->isSeriesVisible(QStringLiteral("train/recon_l1")));
    QCOMPARE(loss->seriesLabel(QStringLiteral("train/recon_loss")),
             QStringLiteral("train/recon_loss = train/recon_l1"));
    // The spike at step 4 does not set the range of this short run.
    QVERIFY2(loss->customPlot()->yAxis->range().upper < 10.0,
             qPrintable(QString::number(loss->customPlot()->yAxis->range().upper)));
    // Ticks on whole steps only.
    for (double tick : loss->customPlot()->xAxis->tickVector()) {
      QCOMPARE(tick, std::round(tick));
    }
    // Over training time, the hour the run was stopped is not counted.
    monitor->setXAxis(tb::app::MonitorPage::XAxis::WallClock);
    QCPGraph* graph = loss->graph(QStringLiteral("train/loss"));
    const double last = (graph->data()->constEnd() - 1)->key;
    QVERIFY2(last > 20.0 && last < 30.0, qPrintable(QString::number(last)));

    // Log y over ten decades on a short plot: the tick labels (powers, taller than a line)
    // do not overlap.
    tb::widgets::CurvePlot decades;
    decades.resize(400, 220);
    decades.show();
    for (int i = 0; i <= 100; ++i)
      decades.appendPoint(QStringLiteral("lr"), i, std::pow(10.0, -7 + 0.1 * i));
    decades.setLogY(true);
    decades.replotNow();
    decades.replotNow();  // the second one knows the axis' height
    QCPAxis* y = decades.customPlot()->yAxis;
    const int lineHeight = QFontMetrics(y->tickLabelFont()).height();
    const QVector<double> ticks = y->tickVector();
    QVERIFY(ticks.size() >= 2);
    for (int i = 1; i < ticks.size(); ++i) {
      const double apart = std::abs(y->coordToPixel(ticks[i]) - y->coordToPixel(ticks[i - 1]));
      QVERIFY2(apart >= 2.0 * lineHeight, qPrintable(QStringLiteral("%1 px").arg(apart)));
    }

    // One point: one tick, on its step.
    tb::widgets::CurvePlot single;
    single.setWholeNumberX(true);
    single.resize(400, 300);
    single.appendPoint(QStringLiteral("train/loss"), 120, 0.5);
    single.replotNow();
    for (double tick : single.customPlot()->xAxis->tickVector()) {
      QCOMPARE(tick, std::round(tick));
    }
  }

  // 17. Compare at the default size: the form is readable, the splitter widens it, and the
  // per-clip table fits without scrolling sideways.
  void compareFitsTheDefaultWindow() {
    MainWindow window;
    prepare(window);
    window.setCurrentPage(PageId::Compare);
    tb::app::ComparePage* page = window.comparePage();
    QVERIFY(page->openCompareFolder(kDataDir + QStringLiteral("/compare_demo")));
    QTest::qWait(30);
    auto* form = page->findChild<QScrollArea*>(QStringLiteral("compareSetupScroll"));
    QVERIFY2(form->width() >= 400, qPrintable(QString::number(form->width())));
    QTableView* table = page->review()->tableView();
    QVERIFY(!table->horizontalScrollBar()->isVisible());

    auto* splitter = page->findChild<QSplitter*>();
    QSplitterHandle* handle = splitter->handle(1);
    const int widthBefore = form->width();
    const QPoint grip = handle->rect().center();
    QTest::mousePress(handle, Qt::LeftButton, {}, grip);
    QTest::mouseMove(handle, grip + QPoint(160, 0));
    QTest::mouseRelease(handle, Qt::LeftButton, {}, grip + QPoint(160, 0));
    QTRY_VERIFY2(form->width() >= widthBefore + 120, qPrintable(QString::number(form->width())));
  }

  // 18. Checkpoint folders are not runs; double-click opens a run on its curves.
  void runsPageListsRunsAndOpensThem() {
    const QString runs = m_dir.filePath(QStringLiteral("runs-with-init"));
    const QString run = runs + QStringLiteral("/demo-1");
    QVERIFY(makeRun(run));
    QVERIFY(makeRun(runs + QStringLiteral("/demo-1.untrained")));
    QVERIFY(writeFile(runs + QStringLiteral("/demo-1.untrained/model.safetensors"), "weights"));
    MainWindow window;
    prepare(window);
    window.runsPage()->setFolder(runs);
    QVERIFY(window.runsPage()->waitForReads());
    window.setCurrentPage(PageId::Runs);
    QCOMPARE(window.runsPage()->rowCount(), 1);
    QCOMPARE(window.runsPage()->pathAt(0), run);
    QTreeView* view = window.runsPage()->view();
    const QRect row = view->visualRect(view->model()->index(0, 0));
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, row.center());
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, row.center());
    QVERIFY(window.waitForReads());  // the folder is checked off the window's thread
    QCOMPARE(window.openRunDirectoryPath(), run);
    QCOMPARE(window.currentPage(), PageId::Monitor);
  }

  // 19. Keys: pages, Resume, Checkpoint; Help opens the user guide.
  void keyboardAndHelp() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    MainWindow window;
    prepare(window, {1280, 800}, m_dir.filePath(QStringLiteral("runs/keys")));
    const std::pair<Qt::Key, PageId> pages[] = {{Qt::Key_2, PageId::Monitor},
                                                {Qt::Key_3, PageId::Samples},
                                                {Qt::Key_4, PageId::Compare},
                                                {Qt::Key_5, PageId::Runs},
                                                {Qt::Key_1, PageId::Setup}};
    for (const auto& [key, page] : pages) {
      QTest::keyClick(&window, key, Qt::ControlModifier);
      QCOMPARE(window.currentPage(), page);
    }
    RunController* controller = window.runController();
    QSignalSpy progress(controller, &RunController::progressReceived);
    QTest::keyClick(&window, Qt::Key_Return, Qt::ControlModifier);  // Launch
    QVERIFY(progress.wait(kTimeoutMs));
    QSignalSpy checkpoint(controller, &RunController::checkpointReceived);
    checkpoint.clear();
    QTest::keyClick(&window, Qt::Key_K, Qt::ControlModifier);
    QVERIFY(checkpoint.wait(kTimeoutMs));
    QTest::keyClick(&window, Qt::Key_Period, Qt::ControlModifier);  // Stop
    QVERIFY(waitForEnd(controller));
    QCOMPARE(controller->state(), State::Stopped);
    QTRY_VERIFY(window.runControlBar()->resumeButton()->isEnabled());
    QTest::keyClick(&window, Qt::Key_R, Qt::ControlModifier);  // Resume
    QVERIFY(controller->isActive());
    QVERIFY(controller->request().command.resume);
    window.runControlBar()->stop();
    QVERIFY(waitForEnd(controller));

    auto* guide = window.findChild<QAction*>(QStringLiteral("userGuideAction"));
    QVERIFY(guide);
    QCOMPARE(guide->shortcut(), QKeySequence(QKeySequence::HelpContents));
    QVERIFY(MainWindow::userGuidePath().endsWith(QLatin1String("user-guide.md")));
    QVERIFY(QFileInfo(MainWindow::userGuidePath()).isFile());
    QVERIFY(window.findChild<QAction*>(QStringLiteral("shortcutsAction")));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(FirstSessionTest)
#include "test_first_session.moc"
