// The window's run control with the fake trainer: Launch takes the Setup page's settings (and
// is refused with its problems), a started run is opened in every page, the Runs page and
// File > Open Recent open runs, Resume continues the open run. Screenshots of the whole window:
// TB_APP_SCREENSHOT_DIR/window-run-*.png.
#include "app/control/run_controller.h"
#include "app/control/trainer_location.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/pages/samples_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/window_settings.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

using tb::app::MainWindow;
using tb::app::PageId;
using tb::app::RunController;
using tb::app::WindowSettings;
using State = RunController::State;

namespace {

constexpr int kTimeoutMs = 30000;

bool waitForEnd(RunController* controller) {
  QSignalSpy finished(controller, &RunController::finished);
  return !controller->isActive() || finished.wait(kTimeoutMs);
}

}  // namespace

class TestMainWindowRuns : public QObject {
  Q_OBJECT

 private:
  void prepare(MainWindow& window, const QString& runDir) {
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation trainer;
    trainer.path = QStringLiteral(TB_FAKE_TRAINER);
    trainer.origin = QStringLiteral("--trainer");
    window.setTrainerLocation(trainer);
    window.setupPage()->setRunDirectory(runDir);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
  }

  void shoot(MainWindow& window, const QString& name) {
    QTest::qWait(50);
    const QString dir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    QVERIFY(
        window.grab().save(dir + QStringLiteral("/window-run-") + name + QStringLiteral(".png")));
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    WindowSettings().clearRecentRuns();
  }

  void init() { qunsetenv("TB_FAKE_STEPS"); }

  void launchOpensTheRunInEveryPage() {
    qputenv("TB_FAKE_MODE", "normal");
    MainWindow window;
    const QString runDir = m_dir.filePath(QStringLiteral("runs/first"));
    prepare(window, runDir);
    QCOMPARE(window.setupPage()->runDirectory(), runDir);
    QVERIFY2(window.setupPage()->validationErrors().isEmpty(),
             qPrintable(window.setupPage()->validationErrors().join('\n')));
    QSignalSpy opened(&window, &MainWindow::runDirectoryOpened);

    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(window.runController()->isActive());
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Completed);

    // What ran is what the Setup page showed: its command line, its document.
    QCOMPARE(window.runController()->request().configFile(),
             runDir + QStringLiteral(".config.json"));
    QFile config(runDir + QStringLiteral("/config.json"));
    QVERIFY(config.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(config.readAll()), window.setupPage()->configJsonText());

    QVERIFY(!opened.isEmpty());
    QCOMPARE(opened.last().first().toString(), runDir);
    QCOMPARE(window.openRunDirectoryPath(), runDir);
    QCOMPARE(window.currentPage(), PageId::Monitor);
    QVERIFY(window.runsPage()->runDirectories().contains(runDir));
    QCOMPARE(WindowSettings().recentRuns().value(0), runDir);
    // The next launch would go to a new run beside it; Resume continues this one.
    QVERIFY(window.setupPage()->runDirectory() != runDir);
    QCOMPARE(window.runControlBar()->stateText(), QStringLiteral("Completed at step 20"));
    // A completed run has nothing left to resume (once the bar has read it, off this thread).
    QVERIFY(window.runControlBar()->waitForReads());
    QVERIFY(!window.runControlBar()->resumeButton()->isEnabled());
    QVERIFY(window.runControlBar()->resumeButton()->toolTip().contains(QLatin1String("completed")));
    shoot(window, QStringLiteral("completed"));

    // A stopped one does: Resume continues it in its own directory.
    qputenv("TB_FAKE_STEPS", "100000");
    const QString second = window.setupPage()->runDirectory();
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    QTest::mouseClick(window.runControlBar()->stopButton(), Qt::LeftButton);
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Stopped);
    QCOMPARE(window.openRunDirectoryPath(), second);
    QTRY_VERIFY(window.runControlBar()->resumeButton()->isEnabled());
    QTest::mouseClick(window.runControlBar()->resumeButton(), Qt::LeftButton);
    QCOMPARE(window.runController()->request().runDir(), second);
    QVERIFY(window.runController()->request().command.resume);
    QVERIFY(progress.wait(kTimeoutMs));
    window.runControlBar()->stop();
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Stopped);
  }

  void failedRunShowsWhyInTheWindow() {
    qputenv("TB_FAKE_MODE", "fail");
    MainWindow window;
    prepare(window, m_dir.filePath(QStringLiteral("runs/failing")));
    QVERIFY(window.runControlBar()->launch());
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::ExitedWithError);
    QVERIFY(window.runControlBar()->detailsVisible());
    QVERIFY(window.runControlBar()->detailsText().contains(
        QStringLiteral("Hint: point data.path at a folder of videos")));
    shoot(window, QStringLiteral("failed"));
  }

  void launchIsRefusedWithTheSetupProblems() {
    qputenv("TB_FAKE_MODE", "normal");
    MainWindow window;
    prepare(window, m_dir.filePath(QStringLiteral("runs/refused")));
    window.setupPage()->setValue(QStringLiteral("train.max_steps"), -5);
    QVERIFY(!window.setupPage()->validationErrors().isEmpty());
    QVERIFY(!window.runControlBar()->launch());
    QCOMPARE(window.runController()->state(), State::Idle);
    QVERIFY(window.runControlBar()->stateText().startsWith(QStringLiteral("Cannot launch: ")));
    QVERIFY2(window.runControlBar()->detailsText().contains(QStringLiteral("train.max_steps")),
             qPrintable(window.runControlBar()->detailsText()));
    QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("runs/refused"))));
    shoot(window, QStringLiteral("refused"));
  }

  // Issue 39: a refusal's problems (from a keystroke on the way to a good value) must not
  // survive into the run launched once the value is good: not on the state line, not in Details.
  void refusalDoesNotSurviveIntoTheRun() {
    qputenv("TB_FAKE_MODE", "normal");
    qputenv("TB_FAKE_STEPS", "100000");
    MainWindow window;
    prepare(window, m_dir.filePath(QStringLiteral("runs/after-refusal")));
    auto* lr = qobject_cast<QLineEdit*>(
        window.setupPage()->fieldEditor(QStringLiteral("train.lr"))->input());
    QVERIFY(lr != nullptr);
    window.setupPage()->showPanel(tb::app::SetupPage::Panel::Training);
    lr->setFocus();
    lr->selectAll();
    QTest::keyClicks(lr, QStringLiteral("0"));  // on the way to 0.0003
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QCOMPARE(window.runController()->state(), State::Idle);
    QVERIFY2(window.runControlBar()->detailsText().contains(QStringLiteral("train.lr")),
             qPrintable(window.runControlBar()->detailsText()));
    QTest::keyClicks(lr, QStringLiteral(".0003"));
    QVERIFY2(window.setupPage()->validationErrors().isEmpty(),
             qPrintable(window.setupPage()->validationErrors().join('\n')));
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    QCOMPARE(window.runController()->state(), State::Running);
    QCOMPARE(window.runControlBar()->stateText(), QStringLiteral("Running"));
    QTest::mouseClick(window.findChild<QToolButton*>(QStringLiteral("detailsToggle")),
                      Qt::LeftButton);
    QVERIFY(window.runControlBar()->detailsVisible());
    const QString details = window.runControlBar()->detailsText();
    QVERIFY2(!details.contains(QStringLiteral("train.lr")) &&
                 !details.contains(QStringLiteral("Cannot launch")),
             qPrintable(details));
    // What it says instead: the command this run started with.
    QVERIFY2(details.startsWith(QStringLiteral("Started ")) &&
                 details.contains(window.runController()->request().runDir()),
             qPrintable(details));
    shoot(window, QStringLiteral("details-after-refusal"));
    window.runControlBar()->stop();
    QVERIFY(waitForEnd(window.runController()));
  }

  void recentRunsAndTheRunsPageOpenRuns() {
    const QString first = m_dir.filePath(QStringLiteral("runs/first"));
    QVERIFY(QFile::exists(first + QStringLiteral("/config.json")));  // from the launch above
    MainWindow window;
    window.setRemembersWindowState(false);
    QSignalSpy opened(&window, &MainWindow::runDirectoryOpened);

    auto* recent = window.findChild<QMenu*>(QStringLiteral("recentRunsMenu"));
    QVERIFY(recent);
    Q_EMIT recent->aboutToShow();
    QAction* action = nullptr;
    for (QAction* a : recent->actions()) {
      if (a->text() == QDir::toNativeSeparators(first)) action = a;
    }
    QVERIFY2(action, "the launched run is not in File > Open Recent");
    QVERIFY(action->isEnabled());  // enabled at once; a read off the window's thread may grey it
    QVERIFY(window.waitForReads());
    action->trigger();
    QCOMPARE(opened.count(), 0);  // the folder is read off the window's thread, then it opens
    QVERIFY(window.waitForReads());
    QCOMPARE(opened.count(), 1);
    QCOMPARE(opened.last().first().toString(), first);

    window.setCurrentPage(PageId::Runs);
    Q_EMIT window.runsPage()->openRequested(m_dir.filePath(QStringLiteral("runs/failing")));
    QVERIFY(window.waitForReads());
    QCOMPARE(opened.count(), 2);
    QCOMPARE(window.openRunDirectoryPath(), m_dir.filePath(QStringLiteral("runs/failing")));
    QCOMPARE(window.currentPage(), PageId::Monitor);  // opened from the browser: watched
  }

  // A recent run that is gone is greyed out, once a read off the window's thread says so.
  void recentRunThatIsGoneIsGreyedOut() {
    const QString gone = m_dir.filePath(QStringLiteral("runs/gone"));
    WindowSettings().addRecentRun(gone);
    MainWindow window;
    window.setRemembersWindowState(false);
    auto* recent = window.findChild<QMenu*>(QStringLiteral("recentRunsMenu"));
    QVERIFY(recent);
    Q_EMIT recent->aboutToShow();
    QAction* action = nullptr;
    for (QAction* a : recent->actions()) {
      if (a->text() == QDir::toNativeSeparators(gone)) action = a;
    }
    QVERIFY2(action, "the gone run is not in File > Open Recent");
    QTRY_VERIFY(!action->isEnabled());
  }

  void closingWithARunAsksFirst() {
    qputenv("TB_FAKE_MODE", "normal");
    qputenv("TB_FAKE_STEPS", "100000");
    MainWindow window;
    prepare(window, m_dir.filePath(QStringLiteral("runs/long")));
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QVERIFY(window.runControlBar()->launch());
    QVERIFY(progress.wait(kTimeoutMs));

    // Answer the question with `button` as soon as it is asked.
    auto answer = [](const QString& button) {
      QTimer::singleShot(100, [button] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        QVERIFY(box);
        QVERIFY2(box->text().startsWith(QStringLiteral("A run is in progress (running")),
                 qPrintable(box->text()));
        for (QAbstractButton* b : box->buttons()) {
          if (b->text() == button) b->click();
        }
      });
    };
    answer(QStringLiteral("Cancel"));
    QVERIFY(!window.close());
    QVERIFY(window.isVisible());
    QCOMPARE(window.runController()->state(), State::Running);

    answer(QStringLiteral("Stop Run and Quit"));
    QVERIFY(window.close());
    QCOMPARE(window.runController()->state(), State::Stopping);
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Stopped);
  }

  // End to end in the window: Launch a tiny real training from the Setup page; its curves
  // and a sample arrive on the Monitor and Samples pages, which follow the run's files.
  void realTrainerLaunch() {
    const QString trainerPath = QString::fromLocal8Bit(qgetenv("TB_TEST_TRAINER"));
    if (trainerPath.isEmpty()) QSKIP("TB_TEST_TRAINER is not set (the build has no trainer)");
    MainWindow window;
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation trainer;
    trainer.path = trainerPath;
    trainer.origin = QStringLiteral("TB_TEST_TRAINER");
    window.setTrainerLocation(trainer);
    QVERIFY(window.setupPage()->applyPreset(QStringLiteral("demo")));
    const std::pair<const char*, int> settings[] = {
        {"train.max_steps", 6},   {"train.log_every", 1},    {"train.valid_every", 3},
        {"train.valid_clips", 2}, {"train.sample_every", 3}, {"train.checkpoint_every", 3}};
    for (const auto& [key, value] : settings) {
      window.setupPage()->setValue(QString::fromLatin1(key), value);
    }
    const QString runDir = m_dir.filePath(QStringLiteral("runs/real"));
    window.setupPage()->setRunDirectory(runDir);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QSignalSpy finished(window.runController(), &RunController::finished);
    QVERIFY(window.runControlBar()->launch());
    QVERIFY(finished.wait(10 * 60 * 1000));
    QVERIFY2(window.runController()->state() == State::Completed,
             qPrintable(window.runControlBar()->detailsText()));
    QCOMPARE(window.runControlBar()->stateText(), QStringLiteral("Completed at step 6"));
    QCOMPARE(window.currentPage(), PageId::Monitor);
    // The pages follow the run's files on timers and a reading thread: on a loaded CI machine
    // (the run itself took 40 s there) give them a minute; a failure says what Monitor showed.
    QTRY_VERIFY2_WITH_TIMEOUT(
        window.monitorPage()->isShowingPlot(),
        qPrintable(window.monitorPage()->emptyHeadline() + QStringLiteral(" / ") +
                   window.monitorPage()->runDirectory()),
        60000);
    shoot(window, QStringLiteral("real-monitor"));
    window.setCurrentPage(PageId::Samples);
    // The page follows the run's files on a timer: the last sample may arrive a poll later.
    QTRY_VERIFY_WITH_TIMEOUT(window.samplesPage()->steps().contains(6), 60000);
    QVERIFY(window.samplesPage()->steps().contains(3));
    shoot(window, QStringLiteral("real-samples"));
  }

  void runMenuMirrorsTheBar() {
    MainWindow window;
    window.setRemembersWindowState(false);
    for (const char* name : {"launchAction", "stopAction", "resumeAction", "checkpointAction"}) {
      QVERIFY2(window.findChild<QAction*>(QString::fromLatin1(name)), name);
    }
    auto* launch = window.findChild<QAction*>(QStringLiteral("launchAction"));
    QCOMPARE(launch->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_Return));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestMainWindowRuns)
#include "test_main_window_runs.moc"
