// HeadlessRunner: input checks that name the option, the progress line, the exit status of every
// ending, and SIGINT as a graceful stop; against the fake trainer (tests/app/fake_trainer.cpp)
// in this process, and against the real `tokenbench` binary in a child process.
#include "app/control/headless_runner.h"
#include "tests/app/tiny_real_run.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <csignal>
#include <limits>
#include <sstream>

using tb::app::HeadlessRunner;
using State = tb::app::RunController::State;

namespace {

const QString kFake = QStringLiteral(TB_FAKE_TRAINER);
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

class TestHeadlessRunner : public QObject {
  Q_OBJECT

 private:
  // Runs the fake trainer in `mode` through a HeadlessRunner; returns the exit status.
  int runFake(const QByteArray& mode, std::string* err, HeadlessRunner* runner = nullptr) {
    qputenv("TB_FAKE_MODE", mode);
    HeadlessRunner local({m_config, newRunDir(), false, {}});
    HeadlessRunner& r = runner ? *runner : local;
    std::ostringstream out;
    std::ostringstream errStream;
    const int status = r.run(kFake, out, errStream);
    *err = errStream.str();
    if (!out.str().empty()) {
      qWarning("stdout was not empty: %s", out.str().c_str());
      return -1;
    }
    return status;
  }

  std::string newRunDir() {
    return m_dir.filePath(QStringLiteral("run_%1").arg(++m_runs)).toStdString();
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_config = m_dir.filePath(QStringLiteral("config.json")).toStdString();
    QFile config(QString::fromStdString(m_config));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{}\n");
    m_runDir = m_dir.filePath(QStringLiteral("run")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(m_runDir)));
  }

  void init() {
    qunsetenv("TB_FAKE_STEPS");
    qunsetenv("TB_FAKE_STEP_MS");
  }

  void badInputsNameTheOption_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("runDir");
    QTest::addColumn<bool>("resume");
    QTest::addColumn<QString>("named");
    const QString config = QString::fromStdString(m_config);
    const QString runDir = QString::fromStdString(m_runDir);
    const QString missing = m_dir.filePath(QStringLiteral("missing"));
    QTest::newRow("nothing") << QString() << QString() << false << "--run-dir";
    QTest::newRow("no run dir") << config << QString() << false << "--run-dir";
    QTest::newRow("no config") << QString() << runDir << false << "--config";
    QTest::newRow("config missing") << missing << runDir << false << "--config: no such file";
    QTest::newRow("config is a directory") << runDir << runDir << false << "--config";
    QTest::newRow("resume a missing run") << QString() << missing << true << "--run-dir";
    QTest::newRow("run dir is a file") << config << config << false << "--run-dir";
  }

  void badInputsNameTheOption() {
    QFETCH(QString, config);
    QFETCH(QString, runDir);
    QFETCH(bool, resume);
    QFETCH(QString, named);
    HeadlessRunner runner({config.toStdString(), runDir.toStdString(), resume, {}});
    const QString problem = QString::fromStdString(runner.validate());
    QVERIFY2(problem.contains(named), qPrintable("expected '" + named + "', got: " + problem));

    qputenv("TB_FAKE_MODE", "normal");
    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(kFake, out, err), 2);
    QVERIFY(QString::fromStdString(err.str()).contains(named));
    QVERIFY(out.str().empty());
  }

  void goodInputsAreAccepted_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("runDir");
    QTest::addColumn<bool>("resume");
    const QString config = QString::fromStdString(m_config);
    const QString runDir = QString::fromStdString(m_runDir);
    QTest::newRow("new run in existing dir") << config << runDir << false;
    QTest::newRow("new run in new dir") << config << m_dir.filePath(QStringLiteral("new")) << false;
    QTest::newRow("resume") << QString() << runDir << true;
  }

  void goodInputsAreAccepted() {
    QFETCH(QString, config);
    QFETCH(QString, runDir);
    QFETCH(bool, resume);
    const HeadlessRunner runner({config.toStdString(), runDir.toStdString(), resume, {}});
    QCOMPARE(QString::fromStdString(runner.validate()), QString());
  }

  void progressLine() {
    QCOMPARE(HeadlessRunner::progressLine({120, 1000, 3.4, 258.0}, 0.0712),
             std::string("step 120/1000  loss 0.0712  3.4 it/s  ETA 4m18s"));
    QCOMPARE(HeadlessRunner::progressLine({5, 300, 0.171, 7300.0}, 0.45856264),
             std::string("step 5/300  loss 0.4586  0.17 it/s  ETA 2h01m"));
    QCOMPARE(HeadlessRunner::progressLine({1, 10, kNaN, kNaN}, std::nullopt),
             std::string("step 1/10"));
    QCOMPARE(HeadlessRunner::progressLine({2, 10, 12.0, 0.7}, kNaN),
             std::string("step 2/10  loss nan  12.0 it/s  ETA 1s"));
  }

  // Before the first step, each phase gets a line, a counted one with its share.
  void phasesBeforeTheFirstStepArePrinted() {
    qputenv("TB_FAKE_PHASES", "3");
    std::string err;
    const int status = runFake("normal", &err);
    qunsetenv("TB_FAKE_PHASES");
    QCOMPARE(status, 0);
    const auto data = err.find("tokenbench: indexing the data folder\n");
    const auto reference =
        err.find("tokenbench: fitting the classic VQ reference: drawing blocks (0 %)\n");
    const auto firstStep = err.find("/20");  // the first progress line, "step N/20 ..."
    QVERIFY2(data != std::string::npos, err.c_str());
    QVERIFY2(reference != std::string::npos, err.c_str());
    QVERIFY2(firstStep != std::string::npos, err.c_str());
    QVERIFY(data < reference);
    QVERIFY(reference < firstStep);
  }

  void exitStatusFollowsTheTrainer() {
    QCOMPARE(HeadlessRunner::exitStatus(State::Completed, 0), 0);
    QCOMPARE(HeadlessRunner::exitStatus(State::Stopped, 0), 0);
    QCOMPARE(HeadlessRunner::exitStatus(State::ExitedWithError, 1), 1);
    QCOMPARE(HeadlessRunner::exitStatus(State::ExitedWithError, 2), 2);
    QCOMPARE(HeadlessRunner::exitStatus(State::ExitedWithError, 3), 3);
    QCOMPARE(HeadlessRunner::exitStatus(State::ExitedWithError, 0), 1);  // done "failed", exit 0
    QCOMPARE(HeadlessRunner::exitStatus(State::FailedToStart, 0), 2);
    QCOMPARE(HeadlessRunner::exitStatus(State::Crashed, 6), 1);
    QCOMPARE(HeadlessRunner::exitStatus(State::Killed, 9), 1);
    QCOMPARE(HeadlessRunner::exitStatus(State::ExitedWithoutDone, 0), 1);
  }

  void completedRunPrintsProgressAndEnding() {
    std::string err;
    QCOMPARE(runFake("normal", &err), 0);
    const QString text = QString::fromStdString(err);
    QVERIFY2(text.contains(QStringLiteral("\nstep 20/20  loss 0.05  100.0 it/s  ETA 0s\n")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("tokenbench: trainer 0.0.0-fake (torch none), 1 "
                                          "process (single) on cpu in bf16 (auto: fake), run dir "
                                          "/")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("fake: done\n")), err.c_str());  // the trainer's log
    QVERIFY2(text.endsWith(QStringLiteral("tokenbench: completed at step 20\n")), err.c_str());
  }

  void everyProgressLineWithoutThrottle() {
    HeadlessRunner runner({m_config, newRunDir(), false, {}});
    runner.setProgressIntervalMs(0);
    std::string err;
    QCOMPARE(runFake("normal", &err, &runner), 0);
    const auto lines = QString::fromStdString(err).split(QLatin1Char('\n'));
    QCOMPARE(lines.filter(QRegularExpression(QStringLiteral("^step \\d+/20  loss "))).size(), 20);
  }

  void endingsGiveTheTrainersStatus_data() {
    QTest::addColumn<QByteArray>("mode");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("said");
    QTest::newRow("fail")
        << QByteArray("fail") << 1
        << "tokenbench: error [data_path_missing]: data.path \"/nowhere\" is "
           "not a folder\ntokenbench: hint: point data.path at a folder of videos\n";
    QTest::newRow("usage") << QByteArray("usage") << 2
                           << "tokenbench: exited with status 2 (usage or configuration error)";
    QTest::newRow("exit3") << QByteArray("exit3") << 3
                           << "tokenbench: exited with status 3 at step 2";
    QTest::newRow("crash") << QByteArray("crash") << 1 << "tokenbench: crashed (SIGABRT) at step 3";
    QTest::newRow("nodone") << QByteArray("nodone") << 1
                            << "tokenbench: exited with status 0 at step 3 without reporting done";
    QTest::newRow("garbage") << QByteArray("garbage") << 0
                             << "tokenbench: ignored 5 stdout line(s) that were not events";
  }

  void endingsGiveTheTrainersStatus() {
    QFETCH(QByteArray, mode);
    QFETCH(int, status);
    QFETCH(QString, said);
    std::string err;
    QCOMPARE(runFake(mode, &err), status);
    QVERIFY2(QString::fromStdString(err).contains(said), err.c_str());
  }

  void missingTrainerIsUsage() {
    HeadlessRunner runner({m_config, newRunDir(), false, {}});
    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(m_dir.filePath(QStringLiteral("nothing-here")), out, err), 2);
    QVERIFY2(QString::fromStdString(err.str()).contains(QStringLiteral("failed to start")),
             err.str().c_str());
  }

  void sigintStopsTheRunGracefully() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    struct sigaction before = {};
    ::sigaction(SIGINT, nullptr, &before);
    QTimer::singleShot(500, [] { ::raise(SIGINT); });
    std::string err;
    QCOMPARE(runFake("normal", &err), 0);
    const QString text = QString::fromStdString(err);
    QVERIFY2(text.contains(QStringLiteral("tokenbench: SIGINT: stopping after the current step; ")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("fake: stopping at step ")), err.c_str());
    QVERIFY2(QRegularExpression(QStringLiteral("tokenbench: stopped at step \\d+\n$"))
                 .match(text)
                 .hasMatch(),
             err.c_str());
    // The handler is gone with the runner: SIGINT is back to what it was.
    struct sigaction after = {};
    ::sigaction(SIGINT, nullptr, &after);
    QVERIFY(after.sa_handler == before.sa_handler);
  }

  void repeatedSignalsEscalate() {
    QTimer::singleShot(300, [] { ::raise(SIGTERM); });
    QTimer::singleShot(500, [] { ::raise(SIGINT); });
    QTimer::singleShot(700, [] { ::raise(SIGINT); });
    std::string err;
    QCOMPARE(runFake("hang", &err), 1);
    const QString text = QString::fromStdString(err);
    QVERIFY2(text.contains(QStringLiteral("tokenbench: SIGTERM: stopping after the current step")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("tokenbench: SIGINT: stopping: SIGTERM sent")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("tokenbench: SIGINT: stopping: SIGKILL sent")),
             err.c_str());
    QVERIFY2(text.contains(QStringLiteral("tokenbench: killed (SIGKILL)")), err.c_str());
  }

  // The real binary, no display: SIGINT from outside ends the run cleanly with status 0.
  void binaryStopsOnSigint() {
    QProcess tokenbench;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    env.insert(QStringLiteral("TB_FAKE_MODE"), QStringLiteral("normal"));
    env.insert(QStringLiteral("TB_FAKE_STEPS"), QStringLiteral("100000"));
    env.insert(QStringLiteral("TB_FAKE_STEP_MS"), QStringLiteral("20"));
    tokenbench.setProcessEnvironment(env);
    tokenbench.setReadChannel(QProcess::StandardError);
    tokenbench.start(QStringLiteral(TB_TOKENBENCH),
                     {QStringLiteral("--no-gui"), QStringLiteral("--trainer"), kFake,
                      QStringLiteral("--config"), QString::fromStdString(m_config),
                      QStringLiteral("--run-dir"), QString::fromStdString(newRunDir())});
    QVERIFY(tokenbench.waitForStarted());
    QByteArray err;
    while (!err.contains("step ") && tokenbench.waitForReadyRead(10000)) {
      err += tokenbench.readAllStandardError();
    }
    QVERIFY2(err.contains("step "), err.constData());
    QCOMPARE(::kill(static_cast<pid_t>(tokenbench.processId()), SIGINT), 0);
    QVERIFY(tokenbench.waitForFinished(20000));
    err += tokenbench.readAllStandardError();
    QCOMPARE(tokenbench.exitStatus(), QProcess::NormalExit);
    QCOMPARE(tokenbench.exitCode(), 0);
    QVERIFY2(err.contains("tokenbench: SIGINT: stopping after the current step"), err.constData());
    QVERIFY2(err.contains("tokenbench: stopped at step "), err.constData());
    QVERIFY(tokenbench.readAllStandardOutput().isEmpty());
  }

  // End to end: `tokenbench --no-gui` semantics with the real trainer, then a resume.
  void realTrainerTinyRun() {
    const QString trainer = tb::test::realTrainer();
    if (trainer.isEmpty()) QSKIP("TB_TEST_TRAINER is not set (the build has no trainer)");
    const QString config = m_dir.filePath(QStringLiteral("tiny.json"));
    const QString problem = tb::test::writeTinyRunConfig(trainer, config);
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const std::string runDir = m_dir.filePath(QStringLiteral("real_run")).toStdString();

    HeadlessRunner runner({config.toStdString(), runDir, false, {}});
    runner.setProgressIntervalMs(0);
    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(trainer, out, err), 0);
    const QString text = QString::fromStdString(err.str());
    QVERIFY2(
        QRegularExpression(QStringLiteral("\nstep 6/6  loss \\d\\.\\d+  [0-9.]+ it/s  ETA 0s\n"))
            .match(text)
            .hasMatch(),
        err.str().c_str());
    QVERIFY2(text.endsWith(QStringLiteral("tokenbench: completed at step 6\n")), err.str().c_str());
    QVERIFY(out.str().empty());

    // The same run dir again without --resume: the trainer refuses, and so do we (status 2).
    std::ostringstream err2;
    QCOMPARE(runner.run(trainer, out, err2), 2);
    QVERIFY2(QString::fromStdString(err2.str()).contains(QStringLiteral("--resume")),
             err2.str().c_str());
  }

  void compareArgumentsPassThrough() {
    tb::app::CompareRequest request;
    request.trainer = kFake;
    request.command.entries = {{"a", "/x"}};
    request.command.out_dir = "/o";
    qputenv("TB_FAKE_EXIT", "3");
    std::ostringstream err;
    QCOMPARE(HeadlessRunner::runCompare(request, err), 3);
    qunsetenv("TB_FAKE_EXIT");
    request.trainer = m_dir.filePath(QStringLiteral("none"));
    QCOMPARE(HeadlessRunner::runCompare(request, err), 2);
    QVERIFY2(
        QString::fromStdString(err.str()).startsWith(QStringLiteral("tokenbench: cannot start")),
        err.str().c_str());
  }

 private:
  QTemporaryDir m_dir;
  std::string m_config;
  std::string m_runDir;
  int m_runs = 0;
};

QTEST_GUILESS_MAIN(TestHeadlessRunner)
#include "test_headless_runner.moc"
