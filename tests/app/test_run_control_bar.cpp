// RunControlBar with the fake trainer: launch refused with the problems shown, a completed run,
// failures that open Details with the error, hint and the trainer's last lines, Stop escalation
// on the button, Resume of the run just made, protocol warnings. Screenshots of each state go to
// TB_APP_SCREENSHOT_DIR/run-control-*.png.
#include "app/gui/run_control_bar.h"
#include "tests/app/stalled_files.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QObject>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>

using tb::app::LaunchPlan;
using tb::app::RunControlBar;
using tb::app::RunController;
using State = RunController::State;

namespace {

constexpr int kTimeoutMs = 30000;
const QString kConfig = QStringLiteral("{\n  \"version\": 1\n}\n");

// Pixels of `image` within `tolerance` of `color` (per channel).
int countColor(const QImage& image, const QColor& color, int tolerance = 40) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (qAbs(c.red() - color.red()) <= tolerance &&
          qAbs(c.green() - color.green()) <= tolerance &&
          qAbs(c.blue() - color.blue()) <= tolerance) {
        ++count;
      }
    }
  }
  return count;
}

}  // namespace

class TestRunControlBar : public QObject {
  Q_OBJECT

 private:
  struct Fixture {
    RunController controller;
    RunControlBar bar{&controller};
    QString runDir;
  };

  std::unique_ptr<Fixture> makeBar(const QByteArray& mode) {
    qputenv("TB_FAKE_MODE", mode);
    auto f = std::make_unique<Fixture>();
    f->runDir = m_dir.filePath(QStringLiteral("run_%1").arg(++m_runs));
    const QString runDir = f->runDir;
    f->bar.setTrainer(QStringLiteral(TB_FAKE_TRAINER));
    f->bar.setPlanner([runDir] {
      LaunchPlan plan;
      plan.request.setRunDir(runDir);
      plan.configJson = kConfig;
      return plan;
    });
    f->bar.setResumeDirectoryProvider([runDir] { return runDir; });
    f->bar.resize(1100, 60);
    f->bar.show();
    return f;
  }

  static bool waitForEnd(RunController& controller) {
    QSignalSpy finished(&controller, &RunController::finished);
    return !controller.isActive() || finished.wait(kTimeoutMs);
  }

  void shoot(QWidget& widget, const QString& name) {
    const QString dir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    QTest::qWait(20);  // let posted layout requests run, as a shown window would
    QVERIFY(
        widget.grab().save(dir + QStringLiteral("/run-control-") + name + QStringLiteral(".png")));
  }

 private Q_SLOTS:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void init() {
    qunsetenv("TB_FAKE_STEPS");
    qunsetenv("TB_FAKE_STEP_MS");
  }

  void idleBarOffersLaunchOnly() {
    auto f = makeBar("normal");
    QVERIFY(f->bar.launchButton()->isEnabled());
    QVERIFY(!f->bar.stopButton()->isEnabled());
    QVERIFY(!f->bar.resumeButton()->isEnabled());  // nothing in the run dir yet
    QVERIFY(!f->bar.checkpointButton()->isEnabled());
    QCOMPARE(f->bar.stateText(), QStringLiteral("No run started"));
    QVERIFY(!f->bar.detailsVisible());
    QVERIFY(!f->bar.progressBar()->isVisible());
    shoot(f->bar, QStringLiteral("idle"));
  }

  void launchIsRefusedWithTheProblems() {
    auto f = makeBar("normal");
    f->bar.setPlanner([] {
      LaunchPlan plan;
      plan.request.setRunDir(QStringLiteral("/tmp/x"));
      plan.problems = QStringList{QStringLiteral("train.lr: must be > 0"),
                                  QStringLiteral("data.path: no such folder")};
      return plan;
    });
    QSignalSpy launched(&f->bar, &RunControlBar::runLaunched);
    QTest::mouseClick(f->bar.launchButton(), Qt::LeftButton);
    QCOMPARE(launched.count(), 0);
    QCOMPARE(f->controller.state(), State::Idle);
    QCOMPARE(f->bar.stateText(), QStringLiteral("Cannot launch: 2 problems in the settings"));
    QVERIFY(f->bar.detailsVisible());
    QVERIFY(f->bar.detailsText().contains(QStringLiteral("  train.lr: must be > 0\n")));
    QVERIFY(f->bar.detailsText().endsWith(QStringLiteral("  data.path: no such folder")));
    QCOMPARE(f->bar.stateColor(), RunControlBar::colorFor(State::ExitedWithError));
    shoot(f->bar, QStringLiteral("refused"));
  }

  void launchIsRefusedWithoutTrainer() {
    auto f = makeBar("normal");
    f->bar.setTrainer(QString(), QStringLiteral("tokenbench-trainer: not found beside tokenbench"));
    QVERIFY(!f->bar.launch());
    QCOMPARE(f->bar.stateText(), QStringLiteral("Cannot launch: no tokenbench-trainer"));
    QVERIFY(f->bar.detailsText().contains(QStringLiteral("not found beside tokenbench")));
  }

  void completedRunShowsProgressAndColour() {
    auto f = makeBar("normal");
    QSignalSpy launched(&f->bar, &RunControlBar::runLaunched);
    QSignalSpy ready(&f->bar, &RunControlBar::runDirectoryReady);
    QTest::mouseClick(f->bar.launchButton(), Qt::LeftButton);
    QCOMPARE(launched.count(), 1);
    QCOMPARE(launched.first().first().toString(), QDir::cleanPath(f->runDir));
    QVERIFY(!f->bar.launchButton()->isEnabled());
    QVERIFY(f->bar.stopButton()->isEnabled());
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Completed);
    QCOMPARE(ready.count(), 1);
    QCOMPARE(f->bar.stateText(), QStringLiteral("Completed at step 20"));
    QCOMPARE(f->bar.stateColor(), QColor(0x1a, 0x7f, 0x37));
    QCOMPARE(f->bar.progressBar()->value(), 20);
    QCOMPARE(f->bar.progressBar()->maximum(), 20);
    QCOMPARE(f->bar.progressBar()->text(), QStringLiteral("20 / 20"));
    QVERIFY(!f->bar.progressBar()->isVisible());  // the state line says it all now
    QVERIFY(!f->bar.detailsVisible());            // success does not push details at anyone
    // The configuration the trainer got is the planner's document, through a temporary file.
    QFile copied(QDir(f->runDir).filePath(QStringLiteral("config.json")));
    QVERIFY(copied.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(copied.readAll()), kConfig);
    QVERIFY(f->controller.request().configFile().contains(QStringLiteral("tokenbench-config-")));
    // A run that completed has nothing left to resume: Resume says so.
    QTRY_VERIFY(f->bar.resumeButton()->toolTip().contains(QLatin1String("completed")));
    QVERIFY(!f->bar.resumeButton()->isEnabled());
    const QImage shot = f->bar.grab().toImage();
    QVERIFY2(countColor(shot, QColor(0x1a, 0x7f, 0x37), 30) > 30, "no green state drawn");
    shoot(f->bar, QStringLiteral("completed"));
  }

  // Before the first step the bar said only "Running": each phase now shows in words beside the
  // bar, a counted one with its share; the first progress event takes over.
  void phasesBeforeTheFirstStepShowWithTheirShare() {
    auto f = makeBar("normal");
    qputenv("TB_FAKE_PHASES", "4");
    qputenv("TB_FAKE_STEP_MS", "200");
    QVERIFY(f->bar.launch());
    auto* rate = f->bar.findChild<QLabel*>(QStringLiteral("runRate"));
    QVERIFY(rate != nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(f->controller.phase() && f->controller.phase()->phase == "reference" &&
                                 f->controller.phase()->done >= 1,
                             kTimeoutMs);
    QVERIFY(f->bar.progressBar()->isVisible());
    QCOMPARE(f->bar.progressBar()->maximum(), 1000);
    QVERIFY(f->bar.progressBar()->value() >= 250);
    QVERIFY(f->bar.progressBar()->text().endsWith(QLatin1Char('%')));
    QVERIFY(rate->isVisible());
    QVERIFY2(rate->toolTip().contains(QLatin1String("Fitting the classic VQ reference")) ||
                 rate->text().contains(QLatin1String("Fitting the classic VQ reference")),
             qPrintable(rate->text()));
    shoot(f->bar, QStringLiteral("phase"));
    QSignalSpy progress(&f->controller, &RunController::progressReceived);
    QVERIFY(progress.wait(kTimeoutMs));
    QVERIFY(!f->controller.phase());
    QTRY_VERIFY(rate->text().contains(QLatin1String("ETA")));
    f->bar.stop();
    QVERIFY(waitForEnd(f->controller));
    qunsetenv("TB_FAKE_PHASES");
    qunsetenv("TB_FAKE_STEP_MS");
  }

  void resumeContinuesTheRunWithItsOwnConfig() {
    auto f = makeBar("normal");
    qputenv("TB_FAKE_STEPS", "100000");
    QSignalSpy progress(&f->controller, &RunController::progressReceived);
    QVERIFY(f->bar.launch());
    QVERIFY(progress.wait(kTimeoutMs));
    f->bar.stop();
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Stopped);
    f->bar.setResumeDirectoryProvider([dir = f->runDir] { return dir; });
    QVERIFY(f->bar.waitForReads());  // the run directory is read off this thread
    QVERIFY(f->bar.resumeButton()->isEnabled());
    QTest::mouseClick(f->bar.resumeButton(), Qt::LeftButton);
    QVERIFY(f->controller.request().command.resume);
    QVERIFY(f->controller.request().configFile().isEmpty());
    QVERIFY(progress.wait(kTimeoutMs));
    f->bar.stop();
    QVERIFY(waitForEnd(f->controller));
    qunsetenv("TB_FAKE_STEPS");
    QCOMPARE(f->controller.state(), State::Stopped);
  }

  // The bar reads the run it would resume (config.json, events, metrics, the lock) off the
  // window's thread: a hung file system leaves the window responsive.
  void stalledRunFilesLeaveTheBarResponsive() {
    auto f = makeBar("normal");
    QVERIFY(QDir().mkpath(f->runDir));
    QFile config(QDir(f->runDir).filePath(QStringLiteral("config.json")));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(kConfig.toUtf8());
    config.close();
    QStringList fifos;
    for (const char* name : {"metrics.jsonl", "events.jsonl"}) {
      fifos << QDir(f->runDir).filePath(QLatin1String(name));
      QVERIFY(tb::test::makeStalledFile(fifos.back()));
    }
    f->bar.setResumeDirectoryProvider([dir = f->runDir] { return dir; });
    const qint64 latency = tb::test::timerLatencyMs();
    QVERIFY2(latency >= 0 && latency < 100, qPrintable(QString::number(latency)));
    QVERIFY(!f->bar.resumeButton()->isEnabled());  // not read yet
    QVERIFY(tb::test::releaseStalledFiles(fifos, [&] { return f->bar.waitForReads(20); }));
    QVERIFY(f->bar.resumeButton()->isEnabled());  // a run with a config.json, not running
  }

  void failureOpensDetailsWithErrorHintAndLog() {
    auto f = makeBar("fail");
    QVERIFY(f->bar.launch());
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->bar.stateText(),
             QStringLiteral("Failed at step 2: data.path \"/nowhere\" is not a folder"));
    QCOMPARE(f->bar.stateColor(), QColor(0xcf, 0x22, 0x2e));
    QVERIFY(f->bar.detailsVisible());
    const QString details = f->bar.detailsText();
    QVERIFY2(details.contains(QStringLiteral(
                 "Error [data_path_missing]: data.path \"/nowhere\" is not a folder\n"
                 "Hint: point data.path at a folder of videos")),
             qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral(
                 "  tokenbench-trainer: error: data.path \"/nowhere\" is not a folder")),
             qPrintable(details));
    const QImage shot = f->bar.grab().toImage();
    QVERIFY2(countColor(shot, QColor(0xcf, 0x22, 0x2e), 30) > 30, "no red state drawn");
    shoot(f->bar, QStringLiteral("failed"));
  }

  // Issue 39: Details wrap to their width and take the height of their lines (a few), with no
  // horizontal scroll bar over a one-line box.
  void detailsWrapAndTakeTheirLines() {
    auto f = makeBar("normal");
    const QString problem = QStringLiteral(
        "data.path: /home/someone/datasets/kinetics-600/train/videos holds no file the trainer "
        "can read as a video or an image (looked at 0 files; see data.type and data.extensions)");
    f->bar.setPlanner([problem] {
      LaunchPlan plan;
      plan.problems = QStringList{problem};
      return plan;
    });
    QTest::mouseClick(f->bar.launchButton(), Qt::LeftButton);
    QVERIFY(f->bar.detailsVisible());
    QTest::qWait(20);  // the posted layout request
    auto* details = f->bar.findChild<QPlainTextEdit*>(QStringLiteral("runDetails"));
    QVERIFY(details != nullptr);
    QVERIFY(details->fontMetrics().horizontalAdvance(problem) > details->viewport()->width());
    QVERIFY(!details->horizontalScrollBar()->isVisible());
    QTextBlock last = details->document()->lastBlock();
    QVERIFY2(last.layout()->lineCount() >= 2, "the long problem is not wrapped");
    // Headline, a blank line and the problem's lines, each a line of the box's height.
    const int lines = 2 + last.layout()->lineCount();
    const int lineHeight = details->fontMetrics().lineSpacing();
    QVERIFY2(details->viewport()->height() >= lines * lineHeight,
             qPrintable(QStringLiteral("%1 px for %2 lines").arg(details->height()).arg(lines)));
    QVERIFY(!details->verticalScrollBar()->isVisible());
    shoot(f->bar, QStringLiteral("details-wrapped"));
    // A short text takes a short box.
    f->bar.setPlanner([] {
      LaunchPlan plan;
      plan.problems = QStringList{QStringLiteral("train.lr: must be > 0, got 0")};
      return plan;
    });
    QVERIFY(!f->bar.launch());
    QTest::qWait(20);
    QVERIFY2(details->height() < (lines + 1) * lineHeight,
             qPrintable(QString::number(details->height())));
  }

  void crashIsRedWithTheSignal() {
    auto f = makeBar("crash");
    QVERIFY(f->bar.launch());
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->bar.stateText(), QStringLiteral("Crashed (SIGABRT) at step 3"));
    QVERIFY(f->bar.detailsVisible());
    QVERIFY(f->bar.detailsText().endsWith(QStringLiteral("  fake: about to abort")));
    shoot(f->bar, QStringLiteral("crashed"));
  }

  void stopButtonEscalates() {
    auto f = makeBar("hang");
    f->controller.setStopGracePeriodMs(60000);
    QSignalSpy hello(&f->controller, &RunController::helloReceived);
    QVERIFY(f->bar.launch());
    QVERIFY(hello.wait(kTimeoutMs));
    QCOMPARE(f->bar.stopButton()->text(), QStringLiteral("Stop"));
    QTest::mouseClick(f->bar.stopButton(), Qt::LeftButton);
    QCOMPARE(f->controller.state(), State::Stopping);
    QCOMPARE(f->bar.stopButton()->text(), QStringLiteral("Force Stop"));
    QVERIFY(f->bar.stateText().startsWith(QStringLiteral("Stopping after the current step")));
    QCOMPARE(f->bar.stateColor(), RunControlBar::colorFor(State::Stopping));
    shoot(f->bar, QStringLiteral("stopping"));
    QTest::mouseClick(f->bar.stopButton(), Qt::LeftButton);  // SIGTERM (ignored by "hang")
    QCOMPARE(f->bar.stopButton()->text(), QStringLiteral("Kill"));
    QTest::mouseClick(f->bar.stopButton(), Qt::LeftButton);  // SIGKILL
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Killed);
    QVERIFY(f->bar.stateText().startsWith(QStringLiteral("Killed (SIGKILL)")));
    QCOMPARE(f->bar.stopButton()->text(), QStringLiteral("Stop"));
    QVERIFY(!f->bar.stopButton()->isEnabled());
  }

  void runningShowsRateEtaAndCheckpoint() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    auto f = makeBar("normal");
    QSignalSpy progress(&f->controller, &RunController::progressReceived);
    QVERIFY(f->bar.launch());
    QVERIFY(progress.wait(kTimeoutMs));
    QCOMPARE(f->controller.state(), State::Running);
    QVERIFY(f->bar.checkpointButton()->isEnabled());
    QCOMPARE(f->bar.stateText(), QStringLiteral("Running"));
    QVERIFY(f->bar.progressBar()->isVisible());
    QVERIFY(f->bar.progressBar()->text().endsWith(QStringLiteral(" / 100000")));
    QCOMPARE(f->bar.progressBar()->maximum(), 100000);
    QSignalSpy checkpoints(&f->controller, &RunController::checkpointReceived);
    QTest::mouseClick(f->bar.checkpointButton(), Qt::LeftButton);
    QVERIFY(checkpoints.wait(kTimeoutMs));
    shoot(f->bar, QStringLiteral("running"));
    f->bar.stop();
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Stopped);
    QVERIFY(f->bar.stateText().startsWith(QStringLiteral("Stopped at step ")));
  }

  void silenceShowsUnresponsive() {
    qputenv("TB_FAKE_SILENT_MS", "2500");
    auto f = makeBar("silent");
    f->controller.setWatchdogTimeoutMs(300);
    QVERIFY(f->bar.launch());
    QTRY_COMPARE(f->controller.state(), State::Unresponsive);
    QVERIFY2(f->bar.stateText().startsWith(QStringLiteral("Unresponsive: no output for")),
             qPrintable(f->bar.stateText()));
    QCOMPARE(f->bar.stateColor(), RunControlBar::colorFor(State::Unresponsive));
    QVERIFY(f->bar.stopButton()->isEnabled());  // the process is kept, and can be stopped
    shoot(f->bar, QStringLiteral("unresponsive"));
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Completed);
    qunsetenv("TB_FAKE_SILENT_MS");
  }

  void garbageShowsAWarning() {
    auto f = makeBar("garbage");
    QVERIFY(f->bar.launch());
    QVERIFY(waitForEnd(f->controller));
    QCOMPARE(f->controller.state(), State::Completed);
    QCOMPARE(f->bar.protocolWarningText(), QStringLiteral("\u26a0 5 stdout lines ignored"));
    QVERIFY(f->bar.detailsText().contains(QStringLiteral("Protocol: 5 stdout lines ignored")));
    QTest::qWait(20);  // the posted layout request of the warning label
    auto* state = f->bar.findChild<QLabel*>(QStringLiteral("runState"));
    QCOMPARE(state->text(), QStringLiteral("Completed at step 3"));  // room enough: not elided
    shoot(f->bar, QStringLiteral("garbage"));
  }

 private:
  QTemporaryDir m_dir;
  int m_runs = 0;
};

QTEST_MAIN(TestRunControlBar)
#include "test_run_control_bar.moc"
