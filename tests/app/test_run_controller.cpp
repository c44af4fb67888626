// RunController against a fake trainer (tests/app/fake_trainer.cpp) that completes, crashes,
// fails, hangs, floods and prints garbage: every ending must become its own state, with the
// words a person needs, and the stop sequence must escalate exactly as far as needed.
#include "app/control/run_controller.h"
#include "app/control/wire_text.h"
#include "app/text/duration_text.h"
#include "app/text/run_status_text.h"
#include "core/metric_names.h"
#include "core/metrics_log.h"
#include "tests/app/tiny_real_run.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <limits>
#include <memory>
#include <vector>

using tb::app::describeRun;
using tb::app::LaunchRequest;
using tb::app::RunController;
using State = RunController::State;

namespace {

constexpr int kTimeoutMs = 30000;

// The rows of a run's metrics.jsonl: where the metrics are, the stream carries none.
std::vector<tb::core::MetricsRow> metricsRows(const QString& runDir) {
  return tb::core::MetricsFollower(tb::app::runDirectoryAt(runDir).metricsFile()).poll();
}

}  // namespace

class TestRunController : public QObject {
  Q_OBJECT

 private:
  // A request for the fake trainer in `mode`, into a fresh run directory.
  LaunchRequest request(const QByteArray& mode) {
    qputenv("TB_FAKE_MODE", mode);
    LaunchRequest r;
    r.trainer = QStringLiteral(TB_FAKE_TRAINER);
    r.setRunDir(
        m_dir.filePath(QStringLiteral("run_%1_%2").arg(QString::fromLatin1(mode)).arg(++m_runs)));
    return r;
  }

  // Starts `r` and waits for finished(); returns the final state.
  static State runToEnd(RunController& controller, const LaunchRequest& r,
                        int timeoutMs = kTimeoutMs) {
    QSignalSpy finished(&controller, &RunController::finished);
    if (!controller.start(r)) return State::Idle;
    if (finished.isEmpty() && !finished.wait(timeoutMs)) return controller.state();
    return finished.first().first().value<State>();
  }

  static QList<State> states(const QSignalSpy& spy) {
    QList<State> list;
    for (const QList<QVariant>& args : spy) list.append(args.first().value<State>());
    return list;
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QVERIFY2(QFileInfo(QStringLiteral(TB_FAKE_TRAINER)).isExecutable(), TB_FAKE_TRAINER);
    qunsetenv("TB_FAKE_STEPS");
    qunsetenv("TB_FAKE_STEP_MS");
  }

  void init() {
    qunsetenv("TB_FAKE_STEPS");
    qunsetenv("TB_FAKE_STEP_MS");
    qunsetenv("TB_FAKE_FLOOD");
    qunsetenv("TB_FAKE_SILENT_MS");
  }

  void normalRunCompletes() {
    RunController controller;
    QSignalSpy stateSpy(&controller, &RunController::stateChanged);
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QSignalSpy samples(&controller, &RunController::sampleReceived);
    QSignalSpy checkpoints(&controller, &RunController::checkpointReceived);
    QSignalSpy hellos(&controller, &RunController::helloReceived);
    const LaunchRequest r = request("normal");

    QCOMPARE(runToEnd(controller, r), State::Completed);
    QCOMPARE(states(stateSpy), (QList<State>{State::Starting, State::Running, State::Completed}));
    QCOMPARE(hellos.count(), 1);
    QCOMPARE(progress.count(), 20);
    QCOMPARE(progress.last().first().value<tb::core::ProgressEvent>().step, 20);
    const std::vector<tb::core::MetricsRow> rows = metricsRows(r.runDir());
    QCOMPARE(rows.size(), std::size_t{20});
    QCOMPARE(rows.back().step, 20);
    QCOMPARE(samples.count(), 1);
    const QString sample = samples.first().at(1).toString();
    QVERIFY2(QFileInfo(sample).isAbsolute() && QFile::exists(sample), qPrintable(sample));
    QVERIFY(sample.startsWith(QDir(r.runDir()).absolutePath() + QLatin1Char('/')));
    QCOMPARE(checkpoints.count(), 1);
    // hello + 20 x progress + sample + checkpoint + done: no metric events
    QCOMPARE(controller.eventCount(), quint64(1 + 20 + 2 + 1));
    QCOMPARE(controller.garbageLines(), quint64(0));
    QCOMPARE(controller.lastStep(), 20);
    QCOMPARE(controller.exitCode(), 0);
    QVERIFY(controller.stderrTail().contains(QStringLiteral("fake: done")));
    QCOMPARE(describeRun(controller.status()), QStringLiteral("completed at step 20"));
    QVERIFY(!controller.isActive());
    QCOMPARE(controller.processId(), 0);
  }

  void cannotStartTwice() {
    qputenv("TB_FAKE_STEP_MS", "50");
    RunController controller;
    LaunchRequest r = request("normal");
    QVERIFY(controller.start(r));
    QVERIFY(controller.isActive());
    QVERIFY(!controller.start(request("normal")));
    QCOMPARE(controller.runDirectory(), QDir::cleanPath(r.runDir()));
    QSignalSpy finished(&controller, &RunController::finished);
    controller.stop();
    QVERIFY(finished.wait(kTimeoutMs));
    QCOMPARE(controller.state(), State::Stopped);
  }

  void failedToStart_data() {
    QTest::addColumn<QString>("program");
    QTest::newRow("missing") << m_dir.filePath(QStringLiteral("no-such-trainer"));
    const QString plain = m_dir.filePath(QStringLiteral("not-executable"));
    QFile file(plain);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("#!/bin/sh\n");
    file.close();
    QTest::newRow("not executable") << plain;
  }

  void failedToStart() {
    QFETCH(QString, program);
    RunController controller;
    QSignalSpy finished(&controller, &RunController::finished);
    LaunchRequest r = request("normal");
    r.trainer = program;
    QCOMPARE(runToEnd(controller, r), State::FailedToStart);
    QCOMPARE(finished.count(), 1);
    QVERIFY(!controller.startError().isEmpty());
    QVERIFY2(
        describeRun(controller.status()).startsWith(QStringLiteral("failed to start ") + program),
        qPrintable(describeRun(controller.status())));
    QVERIFY(RunController::isFailure(controller.state()));
    QVERIFY(!controller.isActive());
  }

  void crashIsCrashedWithSignalAndStderr() {
    RunController controller;
    QCOMPARE(runToEnd(controller, request("crash")), State::Crashed);
    QCOMPARE(controller.exitSignal(), SIGABRT);
    QCOMPARE(describeRun(controller.status()), QStringLiteral("crashed (SIGABRT) at step 3"));
    QCOMPARE(controller.stderrTail().last(), QStringLiteral("fake: about to abort"));
  }

  void errorEventIsExitedWithError() {
    RunController controller;
    QSignalSpy errors(&controller, &RunController::errorReceived);
    QCOMPARE(runToEnd(controller, request("fail")), State::ExitedWithError);
    QCOMPARE(controller.exitCode(), 1);
    QCOMPARE(errors.count(), 1);
    QVERIFY(controller.lastError());
    QCOMPARE(QString::fromStdString(controller.lastError()->code),
             QStringLiteral("data_path_missing"));
    QCOMPARE(QString::fromStdString(controller.lastError()->hint),
             QStringLiteral("point data.path at a folder of videos"));
    QCOMPARE(describeRun(controller.status()),
             QStringLiteral("failed at step 2: data.path \"/nowhere\" is not a folder"));
    QVERIFY(controller.doneEvent() && controller.doneEvent()->status == "failed");
  }

  void nonZeroExitWithoutEventsQuotesStderr() {
    RunController controller;
    QCOMPARE(runToEnd(controller, request("exit3")), State::ExitedWithError);
    QCOMPARE(controller.exitCode(), 3);
    QCOMPARE(controller.exitSignal(), 0);
    QVERIFY(!controller.lastError());
    QCOMPARE(describeRun(controller.status()),
             QStringLiteral("exited with status 3 at step 2: fake: giving up with status 3"));
    QVERIFY(controller.stderrTail().contains(QStringLiteral("fake: something went wrong")));
  }

  void usageErrorSaysSo() {
    RunController controller;
    QCOMPARE(runToEnd(controller, request("usage")), State::ExitedWithError);
    QCOMPARE(controller.exitCode(), 2);
    QCOMPARE(controller.eventCount(), quint64(0));
    QVERIFY2(describeRun(controller.status())
                 .startsWith(QStringLiteral("exited with status 2 (usage or configuration error): "
                                            "tokenbench-trainer train: ")),
             qPrintable(describeRun(controller.status())));
  }

  void exitZeroWithoutDoneIsNotSuccess() {
    RunController controller;
    QCOMPARE(runToEnd(controller, request("nodone")), State::ExitedWithoutDone);
    QVERIFY(RunController::isFailure(controller.state()));
    QCOMPARE(describeRun(controller.status()),
             QStringLiteral("exited with status 0 at step 3 without reporting done"));
  }

  void floodIsIngestedCompletely() {
    RunController controller;
    quint64 progressCount = 0;
    std::int64_t lastStep = 0;
    connect(&controller, &RunController::progressReceived, this,
            [&](const tb::core::ProgressEvent& e) {
              ++progressCount;
              lastStep = e.step;
            });
    QElapsedTimer clock;
    clock.start();
    QCOMPARE(runToEnd(controller, request("flood")), State::Completed);
    const double seconds = static_cast<double>(clock.elapsed()) / 1000.0;
    QCOMPARE(progressCount, quint64(100000));
    QCOMPARE(lastStep, 100000);
    QCOMPARE(controller.lastProgress()->step, 100000);
    QCOMPARE(controller.garbageLines(), quint64(0));
    qInfo("flood: 100000 progress events in %.2f s (%.0f events/s)", seconds, 100000.0 / seconds);
  }

  // An older trainer sent its metrics rows as `metric` events too: they decode, are counted and
  // otherwise ignored, and keep the watchdog quiet (here they are its only output for 2 s).
  void metricEventsOfAnOlderTrainerAreSignsOfLife() {
    RunController controller;
    controller.setWatchdogTimeoutMs(1000);
    QSignalSpy stateSpy(&controller, &RunController::stateChanged);
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QSignalSpy problems(&controller, &RunController::protocolWarning);
    QCOMPARE(runToEnd(controller, request("metric-events")), State::Completed);
    QCOMPARE(states(stateSpy), (QList<State>{State::Starting, State::Running, State::Completed}));
    QCOMPARE(controller.eventCount(), quint64(1 + 20 + 1 + 1));  // hello, 20 metric, progress, done
    QCOMPARE(controller.garbageLines(), quint64(0));
    QCOMPARE(problems.count(), 0);
    QCOMPARE(progress.count(), 1);
    QCOMPARE(describeRun(controller.status()), QStringLiteral("completed at step 20"));
  }

  void garbageIsCountedNeverFatal() {
    RunController controller;
    QSignalSpy problems(&controller, &RunController::protocolWarning);
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QCOMPARE(runToEnd(controller, request("garbage")), State::Completed);
    QCOMPARE(controller.garbageLines(), quint64(5));
    QCOMPARE(problems.count(), 5);
    QCOMPARE(controller.eventCount(), quint64(3));  // hello, the split progress, done
    QCOMPARE(progress.count(), 1);
    QCOMPARE(progress.first().first().value<tb::core::ProgressEvent>().step, 3);
    QVERIFY2(controller.lastProtocolProblem().contains(QStringLiteral("not an event")),
             qPrintable(controller.lastProtocolProblem()));
    QVERIFY2(problems.at(4).first().toString().contains(QStringLiteral("line over the 1048576")),
             qPrintable(problems.at(4).first().toString()));
  }

  void pathsOutsideTheRunDirectoryAreIgnored() {
    RunController controller;
    QSignalSpy samples(&controller, &RunController::sampleReceived);
    QSignalSpy checkpoints(&controller, &RunController::checkpointReceived);
    QSignalSpy problems(&controller, &RunController::protocolWarning);
    const LaunchRequest r = request("escape");
    QCOMPARE(runToEnd(controller, r), State::Completed);
    QCOMPARE(controller.rejectedPaths(), quint64(3));
    QCOMPARE(problems.count(), 3);
    QVERIFY(problems.first().first().toString().contains(QStringLiteral("../../etc/passwd")));
    QCOMPARE(checkpoints.count(), 0);
    QCOMPARE(samples.count(), 1);
    QCOMPARE(samples.first().at(1).toString(),
             QDir(r.runDir()).absoluteFilePath(QStringLiteral("samples/ok.gif")));
  }

  void silenceIsUnresponsiveAndTheProcessIsKept() {
    qputenv("TB_FAKE_SILENT_MS", "1500");
    RunController controller;
    controller.setWatchdogTimeoutMs(300);
    QSignalSpy stateSpy(&controller, &RunController::stateChanged);
    qint64 pidWhenSilent = 0;
    QString textWhenSilent;
    connect(&controller, &RunController::stateChanged, this, [&](State s) {
      if (s == State::Unresponsive) {
        pidWhenSilent = controller.processId();
        textWhenSilent = describeRun(controller.status());
      }
    });
    QCOMPARE(runToEnd(controller, request("silent")), State::Completed);
    QCOMPARE(states(stateSpy), (QList<State>{State::Starting, State::Running, State::Unresponsive,
                                             State::Running, State::Completed}));
    QVERIFY(pidWhenSilent > 0);
    QVERIFY2(textWhenSilent.startsWith(QStringLiteral("unresponsive: no output for")),
             qPrintable(textWhenSilent));
  }

  void stopLineIsHonoured() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    RunController controller;
    controller.setStopGracePeriodMs(10000);
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QSignalSpy finished(&controller, &RunController::finished);
    QVERIFY(controller.start(request("normal")));
    QVERIFY(progress.wait(kTimeoutMs));
    QElapsedTimer clock;
    clock.start();
    controller.stop();
    QCOMPARE(controller.state(), State::Stopping);
    QVERIFY(describeRun(controller.status())
                .startsWith(QStringLiteral("stopping after the current step")));
    QVERIFY(finished.wait(kTimeoutMs));
    QCOMPARE(controller.state(), State::Stopped);
    QVERIFY2(clock.elapsed() < 5000, "the stop line alone should have stopped it");
    QVERIFY2(controller.stderrTail().join(QLatin1Char('\n')).contains(QLatin1String("(stop)")),
             qPrintable(controller.stderrTail().join(QLatin1Char('\n'))));
    QVERIFY(describeRun(controller.status()).startsWith(QStringLiteral("stopped at step ")));
  }

  void stopSendsSigtermWhenTheStopLineIsIgnored() {
    RunController controller;
    controller.setStopGracePeriodMs(300);
    controller.setTermGracePeriodMs(10000);
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QVERIFY(controller.start(request("ignore-stop")));
    QVERIFY(progress.wait(kTimeoutMs));
    QSignalSpy finished(&controller, &RunController::finished);
    QElapsedTimer clock;
    clock.start();
    controller.stop();
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(clock.elapsed() >= 300);
    QCOMPARE(controller.state(), State::Killed);
    QCOMPARE(controller.exitSignal(), SIGTERM);
    QVERIFY2(
        describeRun(controller.status()).startsWith(QStringLiteral("killed (SIGTERM) at step ")) &&
            describeRun(controller.status())
                .endsWith(QStringLiteral("after it ignored the stop request")),
        qPrintable(describeRun(controller.status())));
  }

  void stopSendsSigkillWhenSigtermIsIgnored() {
    RunController controller;
    controller.setStopGracePeriodMs(300);
    controller.setTermGracePeriodMs(300);
    QSignalSpy hello(&controller, &RunController::helloReceived);
    QSignalSpy stateSpy(&controller, &RunController::stateChanged);
    QVERIFY(controller.start(request("hang")));
    QVERIFY(hello.wait(kTimeoutMs));
    QSignalSpy finished(&controller, &RunController::finished);
    QElapsedTimer clock;
    clock.start();
    controller.stop();
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY2(clock.elapsed() >= 600, "stop line, 300 ms, SIGTERM, 300 ms, SIGKILL");
    QCOMPARE(controller.state(), State::Killed);
    QCOMPARE(controller.exitSignal(), SIGKILL);
    QCOMPARE(describeRun(controller.status()),
             QStringLiteral("killed (SIGKILL) before the first step after "
                            "it ignored the stop request and SIGTERM"));
    QCOMPARE(states(stateSpy).last(), State::Killed);
  }

  void stopAgainSkipsAhead() {
    RunController controller;
    QSignalSpy hello(&controller, &RunController::helloReceived);
    QVERIFY(controller.start(request("hang")));
    QVERIFY(hello.wait(kTimeoutMs));
    QSignalSpy finished(&controller, &RunController::finished);
    QElapsedTimer clock;
    clock.start();
    controller.stop();  // stop line (default grace: 15 s)
    controller.stop();  // SIGTERM now
    QVERIFY(describeRun(controller.status()).startsWith(QStringLiteral("stopping: SIGTERM sent")));
    controller.stop();  // SIGKILL now
    QVERIFY(finished.wait(kTimeoutMs));
    QVERIFY(clock.elapsed() < 5000);
    QCOMPARE(controller.exitSignal(), SIGKILL);
  }

  void checkpointRequestReachesTheTrainer() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    const QString controlLog = m_dir.filePath(QStringLiteral("control_lines.ndjson"));
    qputenv("TB_FAKE_CONTROL_LOG", QFile::encodeName(controlLog));
    RunController controller;
    QSignalSpy progress(&controller, &RunController::progressReceived);
    QSignalSpy checkpoints(&controller, &RunController::checkpointReceived);
    QVERIFY(controller.start(request("normal")));
    QVERIFY(progress.wait(kTimeoutMs));
    QVERIFY(controller.requestCheckpoint());
    QVERIFY(checkpoints.wait(kTimeoutMs));
    const QString path = checkpoints.first().at(1).toString();
    QVERIFY2(QFile::exists(path + QStringLiteral("/COMPLETE")), qPrintable(path));
    QSignalSpy finished(&controller, &RunController::finished);
    controller.stop();
    QVERIFY(!controller.requestCheckpoint());
    QVERIFY(finished.wait(kTimeoutMs));
    QCOMPARE(controller.state(), State::Stopped);
    qunsetenv("TB_FAKE_CONTROL_LOG");
    // The trainer got the golden lines (tests/golden/control_v1.ndjson: stop, then checkpoint)
    // byte for byte: checkpoint, then stop.
    QFile golden(QStringLiteral(TB_TEST_DATA_DIR "/golden/control_v1.ndjson"));
    QVERIFY(golden.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = golden.readAll().split('\n');
    QFile received(controlLog);
    QVERIFY(received.open(QIODevice::ReadOnly));
    QCOMPARE(received.readAll(), lines.at(1) + '\n' + lines.at(0) + '\n');
  }

  void stderrTailKeepsTheLastLines() {
    RunController controller;
    QSignalSpy lines(&controller, &RunController::stderrLine);
    QCOMPARE(runToEnd(controller, request("chatty")), State::Completed);
    QCOMPARE(lines.count(), 201);  // "fake: mode ..." and 200 lines
    const QStringList tail = controller.stderrTail();
    QCOMPARE(tail.size(), RunController::kStderrTailLines);
    QCOMPARE(tail.first(), QStringLiteral("line 150"));
    QCOMPARE(tail.last(), QStringLiteral("line 199"));
  }

  void destructorEndsARunningTrainer() {
    qint64 pid = 0;
    {
      RunController controller;
      controller.setStopGracePeriodMs(200);
      controller.setTermGracePeriodMs(200);
      QSignalSpy hello(&controller, &RunController::helloReceived);
      QVERIFY(controller.start(request("hang")));
      QVERIFY(hello.wait(kTimeoutMs));
      pid = controller.processId();
      QVERIFY(pid > 0);
    }
    errno = 0;
    QCOMPARE(::kill(static_cast<pid_t>(pid), 0), -1);
    QCOMPARE(errno, ESRCH);
  }

  // End to end: a tiny real training; its curves (metrics.jsonl, never the stream) and a sample
  // GIF arrive.
  void realTrainerTinyRun() {
    const QString trainer = tb::test::realTrainer();
    if (trainer.isEmpty()) QSKIP("TB_TEST_TRAINER is not set (the build has no trainer)");
    const QString config = m_dir.filePath(QStringLiteral("tiny.json"));
    const QString problem = tb::test::writeTinyRunConfig(trainer, config);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    RunController controller;
    QSignalSpy hello(&controller, &RunController::helloReceived);
    QSignalSpy samples(&controller, &RunController::sampleReceived);
    QSignalSpy checkpoints(&controller, &RunController::checkpointReceived);
    LaunchRequest r;
    r.trainer = trainer;
    r.setConfigFile(config);
    r.setRunDir(m_dir.filePath(QStringLiteral("real_run")));
    const State end = runToEnd(controller, r, 10 * 60 * 1000);  // seconds, unless the CPUs are busy
    QVERIFY2(end == State::Completed,
             qPrintable(describeRun(controller.status()) + QLatin1Char('\n') +
                        controller.stderrTail().join(QLatin1Char('\n'))));
    QCOMPARE(hello.count(), 1);
    QStringList metricNames;
    std::int64_t lastTrainStep = 0;
    for (const tb::core::MetricsRow& row : metricsRows(r.runDir())) {
      for (const auto& [name, value] : row.values) {
        if (!metricNames.contains(QString::fromStdString(name))) {
          metricNames.append(QString::fromStdString(name));
        }
        if (name == tb::core::metric::kTrainLoss) {
          QVERIFY(std::isfinite(value));
          lastTrainStep = row.step;
        }
      }
    }
    QCOMPARE(lastTrainStep, 6);
    QVERIFY2(metricNames.contains(tb::app::wireText(tb::core::metric::kValidPsnr)),
             qPrintable(metricNames.join(' ')));
    QVERIFY(samples.count() >= 1);
    const QString gif = samples.last().at(1).toString();
    QFile file(gif);
    QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(gif));
    QCOMPARE(file.read(6), QByteArray("GIF89a"));
    QVERIFY(checkpoints.count() >= 1);
    QVERIFY(QFile::exists(checkpoints.last().at(1).toString() + QStringLiteral("/COMPLETE")));
    QCOMPARE(controller.garbageLines(), quint64(0));
    QCOMPARE(describeRun(controller.status()), QStringLiteral("completed at step 6"));
  }

  void formats() {
    QCOMPARE(tb::app::formatDuration(258), QStringLiteral("4m18s"));
    QCOMPARE(tb::app::formatDuration(12.4), QStringLiteral("12s"));
    QCOMPARE(tb::app::formatDuration(59.6), QStringLiteral("1m00s"));
    QCOMPARE(tb::app::formatDuration(3720), QStringLiteral("1h02m"));
    QCOMPARE(tb::app::formatDuration(2 * 86400 + 5 * 3600 + 59), QStringLiteral("2d05h"));
    QCOMPARE(tb::app::formatDuration(std::numeric_limits<double>::quiet_NaN()),
             QStringLiteral("?"));
    QCOMPARE(tb::app::formatDuration(-1), QStringLiteral("?"));
    QCOMPARE(tb::app::signalName(SIGSEGV), QStringLiteral("SIGSEGV"));
    QCOMPARE(tb::app::signalName(63), QStringLiteral("signal 63"));
    QCOMPARE(tb::app::runStateName(State::ExitedWithoutDone),
             QStringLiteral("exited without done"));
  }

 private:
  QTemporaryDir m_dir;
  int m_runs = 0;
};

QTEST_GUILESS_MAIN(TestRunController)
#include "test_run_controller.moc"
