// The run's step, said the same everywhere: RunStep's rule (the done event's step, else the last
// progress or checkpoint event, else the newest checkpoint folder, else the last row), and runs
// whose metrics.jsonl trails their events (rows every 10 steps, ended at step 17; ended at step 4
// before any row) written by the fake trainer through `--no-gui`, then opened in the window: the
// headless runner's last line, the Runs page, the control bar and the Monitor give one number.
#include "app/control/headless_runner.h"
#include "app/control/run_follower.h"
#include "app/control/run_step.h"
#include "app/control/run_summary_reader.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/run_progress_view.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/run_control_bar.h"
#include "core/metrics_log.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <sstream>

using tb::app::HeadlessRunner;
using tb::app::RunStep;

class TestRunStep : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QFile config(m_dir.filePath(QStringLiteral("config.json")));
    QVERIFY(config.open(QIODevice::WriteOnly) && config.write("{}\n") == 3);
  }

  void ruleOverEventsCheckpointsAndRows() {
    using namespace tb::core;
    RunStep step;
    QVERIFY(!step.value());
    step.noteRow(10);
    QCOMPARE(step.value(), std::optional<std::int64_t>(10));  // nothing better yet
    step.setCheckpointSteps({5, 15});
    QCOMPARE(step.value(), std::optional<std::int64_t>(15));  // a checkpoint beats a row
    step.noteEvent(ProgressEvent{10, 20, 1.0, 10.0});
    QCOMPARE(step.value(), std::optional<std::int64_t>(10));  // any event beats both
    QVERIFY(step.fromEvents());
    step.noteEvent(SampleEvent{12, "reconstruction", "samples/a.gif"});
    step.noteEvent(WarningEvent{"nonfinite_step", "loss is nan", std::int64_t{13}});
    QCOMPARE(step.value(), std::optional<std::int64_t>(10));  // samples and warnings say nothing
    step.noteEvent(CheckpointEvent{17, "checkpoints/step_17"});
    QCOMPARE(step.value(), std::optional<std::int64_t>(17));
    step.noteEvent(DoneEvent{"completed", std::nullopt});  // a done without a step keeps it
    QCOMPARE(step.value(), std::optional<std::int64_t>(17));
    step.noteEvent(DoneEvent{"completed", std::int64_t{18}});
    QCOMPARE(step.value(), std::optional<std::int64_t>(18));
    // A resume from an earlier checkpoint: the run is where its latest event says, not higher.
    step.noteEvent(ProgressEvent{16, 20, 1.0, 4.0});
    QCOMPARE(step.value(), std::optional<std::int64_t>(16));
    step.clearEvents();
    QCOMPARE(step.value(), std::optional<std::int64_t>(15));
    step.clear();
    QVERIFY(!step.value());
  }

  void everyPlaceSaysTheSameStep_data() {
    QTest::addColumn<int>("steps");
    QTest::addColumn<qint64>("lastRow");  // -1: no row at all
    QTest::newRow("done 17, last row 10, checkpoint 17") << 17 << qint64(10);
    QTest::newRow("done 4 before any row") << 4 << qint64(-1);
  }

  void everyPlaceSaysTheSameStep() {
    QFETCH(int, steps);
    QFETCH(qint64, lastRow);
    const QString name = QStringLiteral("run-%1").arg(steps);
    const QString runDir = m_dir.filePath(name);
    const QString shown = QLocale().toString(steps);

    // Headless: the fake trainer logs a row every 10 steps, and ends at `steps` with a
    // checkpoint there.
    qputenv("TB_FAKE_MODE", "normal");
    qputenv("TB_FAKE_STEPS", QByteArray::number(steps));
    qputenv("TB_FAKE_LOG_EVERY", "10");
    HeadlessRunner runner({m_dir.filePath(QStringLiteral("config.json")).toStdString(),
                           runDir.toStdString(),
                           false,
                           {}});
    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(QStringLiteral(TB_FAKE_TRAINER), out, err), 0);
    qunsetenv("TB_FAKE_LOG_EVERY");
    qunsetenv("TB_FAKE_STEPS");
    QVERIFY2(QString::fromStdString(err.str()).endsWith(
                 QStringLiteral("tokenbench: completed at step %1\n").arg(steps)),
             err.str().c_str());

    // The files disagree as the runs did: the rows trail the events.
    tb::core::MetricsFollower rows((runDir + QStringLiteral("/metrics.jsonl")).toStdString());
    const std::vector<tb::core::MetricsRow> read = rows.poll();
    QCOMPARE(read.empty() ? qint64(-1) : qint64(read.back().step), lastRow);
    QVERIFY(
        QFileInfo(runDir + QStringLiteral("/checkpoints/step_%1/COMPLETE").arg(steps)).isFile());

    tb::app::RunSummaryReader reader;
    QCOMPARE(reader.read(runDir).step, std::optional<qint64>(steps));

    // The window: Runs page, control bar, Monitor.
    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    QVERIFY(window.openRunDirectory(runDir));
    tb::app::RunsPage* runs = window.runsPage();
    QVERIFY(runs->waitForReads());  // the Runs page reads the run off this thread
    int row = -1;
    for (int r = 0; r < runs->rowCount(); ++r) {
      if (runs->cellText(r, tb::app::RunsPage::Name) == name) row = r;
    }
    QVERIFY(row >= 0);
    QTRY_COMPARE(runs->cellText(row, tb::app::RunsPage::Step), shown);
    QVERIFY(window.runControlBar()->waitForReads());
    QTRY_COMPARE(window.runControlBar()->stateText(),
                 QStringLiteral("%1: completed at step %2").arg(name, shown));

    tb::app::MonitorPage* monitor = window.monitorPage();
    QVERIFY(monitor->waitForReads());
    QCOMPARE(monitor->runFollower()->step(), std::optional<std::int64_t>(steps));
    QVERIFY2(monitor->progressView()->text().contains(QStringLiteral("step %1").arg(shown)),
             qPrintable(monitor->progressView()->text()));
    if (lastRow >= 0) {
      QVERIFY(monitor->isShowingPlot());
    } else {
      // No "Waiting for metrics" for a run that is over: it ended before its first row.
      QVERIFY(!monitor->isShowingPlot());
      QCOMPARE(
          monitor->emptyHeadline(),
          QStringLiteral("%1 completed at step %2, before its first metrics row").arg(name, shown));
    }
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestRunStep)
#include "test_run_step.moc"
