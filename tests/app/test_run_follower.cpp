// RunFollower on real files that grow while it polls: metrics rows and events arrive once, in
// order, partial lines wait, truncation and replacement start the run over (reset, then
// everything again), codebook files and config.json are noticed.
#include "app/control/run_follower.h"

#include "app/control/config_document.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/safetensors.h"
#include "tests/app/reference_codec_file.h"
#include "tests/app/trainer_lock.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

using tb::app::RunFollower;

namespace {

// Asks for a read and waits for its delivery (the follower itself never waits).
bool pollAndWait(RunFollower& follower) {
  follower.poll();
  return follower.waitForReads();
}

void appendBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
  QCOMPARE(file.write(bytes), bytes.size());
}

void writeBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(file.write(bytes), bytes.size());
}

QByteArray metricsLine(std::int64_t step, double loss) {
  return QByteArray::fromStdString(
             tb::core::formatMetricsLine({step, 1.7e9 + step, {{"train/loss", loss}}})) +
         '\n';
}

QByteArray eventLine(const tb::core::Event& event) {
  return QByteArray::fromStdString(tb::core::encodeEvent(event)) + '\n';
}

QVector<tb::core::MetricsRow> rowsOf(const QSignalSpy& spy) {
  QVector<tb::core::MetricsRow> rows;
  for (const QList<QVariant>& call : spy) {
    rows += call.at(0).value<QVector<tb::core::MetricsRow>>();
  }
  return rows;
}

QVector<tb::core::Event> eventsOf(const QSignalSpy& spy) {
  QVector<tb::core::Event> events;
  for (const QList<QVariant>& call : spy) {
    events += call.at(0).value<QVector<tb::core::Event>>();
  }
  return events;
}

void writeCounts(const QString& path, const std::vector<std::int64_t>& counts) {
  tb::core::SafetensorsWriter writer;
  writer.add("counts", tb::core::DType::I64, {static_cast<std::int64_t>(counts.size())},
             counts.data(), counts.size() * sizeof(std::int64_t));
  writer.writeFile(QFile::encodeName(path).toStdString());
}

}  // namespace

class TestRunFollower : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void followsMetricsAsTheyGrow() {
    QTemporaryDir run;
    QVERIFY(run.isValid());
    const QString metrics = run.filePath(QStringLiteral("metrics.jsonl"));
    RunFollower follower;
    QSignalSpy rows(&follower, &RunFollower::rowsAppended);
    QSignalSpy resets(&follower, &RunFollower::reset);
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    QCOMPARE(resets.count(), 1);  // a new directory starts from nothing
    QCOMPARE(rows.count(), 0);    // no metrics.jsonl yet: nothing, and no error

    {
      tb::core::MetricsWriter writer(QFile::encodeName(metrics).toStdString());
      writer.append({10, 1.7e9, {{"train/loss", 0.9}, {"train/lr", 1e-4}}});
      writer.append({20, 1.7e9 + 5, {{"train/loss", 0.7}, {"train/lr", 2e-4}}});
    }
    QVERIFY(pollAndWait(follower));
    QCOMPARE(rows.count(), 1);
    QVector<tb::core::MetricsRow> got = rowsOf(rows);
    QCOMPARE(got.size(), 2);
    QCOMPARE(got[0].step, 10);
    QCOMPARE(got[1].values.at(0).second, 0.7);
    QCOMPARE(follower.lastRowStep().value(), 20);

    QVERIFY(pollAndWait(follower));  // nothing new: no signal
    QCOMPARE(rows.count(), 1);

    // Half a line waits for its end.
    const QByteArray line = metricsLine(30, 0.5);
    appendBytes(metrics, line.left(12));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(rows.count(), 1);
    appendBytes(metrics, line.mid(12));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(rows.count(), 2);
    QCOMPARE(rows.last().at(0).value<QVector<tb::core::MetricsRow>>().at(0).step, 30);
    QCOMPARE(follower.rowCount(), 3);
    QVERIFY(follower.lastWrite().isValid());

    // A garbage line is counted and skipped.
    appendBytes(metrics, "not json\n" + metricsLine(40, 0.4));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(follower.malformedMetricLines(), 1u);
    QCOMPARE(follower.rowCount(), 4);

    // Truncated and written again (a run started over in the same folder): reset, then the
    // new content from its beginning.
    writeBytes(metrics, metricsLine(1, 2.0));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(resets.count(), 2);
    QCOMPARE(rows.last().at(0).value<QVector<tb::core::MetricsRow>>().size(), 1);
    QCOMPARE(rows.last().at(0).value<QVector<tb::core::MetricsRow>>().at(0).step, 1);
    QCOMPARE(follower.rowCount(), 1);
    QCOMPARE(follower.restarts(), 1);
  }

  void followsEventsAndRestartsBothFiles() {
    QTemporaryDir run;
    const QString events = run.filePath(QStringLiteral("events.jsonl"));
    const QString metrics = run.filePath(QStringLiteral("metrics.jsonl"));
    writeBytes(metrics, metricsLine(5, 1.0));
    tb::core::HelloEvent hello;
    hello.trainer_version = "0.1.0";
    hello.protocol = 1;
    QByteArray lines = eventLine(hello) +
                       eventLine(tb::core::MetricEvent{5, {{"train/loss", 1.0}}}) +
                       eventLine(tb::core::ProgressEvent{5, 100, 2.5, 38.0});
    writeBytes(events, lines);

    RunFollower follower;
    QSignalSpy eventSpy(&follower, &RunFollower::eventsAppended);
    QSignalSpy rows(&follower, &RunFollower::rowsAppended);
    QSignalSpy resets(&follower, &RunFollower::reset);
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    QCOMPARE(eventSpy.count(), 1);
    // hello and progress: the metric event (an older trainer's) is left out
    QCOMPARE(eventsOf(eventSpy).size(), 2);
    QVERIFY(std::holds_alternative<tb::core::ProgressEvent>(eventsOf(eventSpy).at(1)));
    QCOMPARE(follower.malformedEventLines(), 0u);
    QVERIFY(follower.hello().has_value());
    QCOMPARE(follower.lastProgress()->total, 100);
    QCOMPARE(follower.lastProgress()->eta_s, 38.0);

    const QByteArray rollback = eventLine(
        tb::core::WarningEvent{"rollback", "rolled back to checkpoints/step_0", std::int64_t{7}});
    appendBytes(events, rollback.left(20));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(eventSpy.count(), 1);  // partial line
    appendBytes(events,
                rollback.mid(20) + "{garbage\n" +
                    eventLine(tb::core::ErrorEvent{"diverged", "too many NaNs", "lower lr"}) +
                    eventLine(tb::core::DoneEvent{"failed", std::int64_t{7}}));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(eventSpy.count(), 2);
    const QVector<tb::core::Event> last = eventSpy.last().at(0).value<QVector<tb::core::Event>>();
    QCOMPARE(last.size(), 3);
    const auto* warning = std::get_if<tb::core::WarningEvent>(&last[0]);
    QVERIFY(warning != nullptr);
    QCOMPARE(warning->code, std::string("rollback"));
    QCOMPARE(*warning->step, 7);
    QCOMPARE(follower.malformedEventLines(), 1u);
    QCOMPARE(follower.done()->status, std::string("failed"));
    QCOMPARE(follower.error()->code, std::string("diverged"));

    // events.jsonl replaced by another file (rename over it): both files are read again.
    const int rowCalls = rows.count();
    const QString replacement = run.filePath(QStringLiteral("events.new"));
    writeBytes(replacement, eventLine(hello));
    QVERIFY(QFile::remove(events));
    QVERIFY(QFile::rename(replacement, events));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(resets.count(), 2);
    QCOMPARE(eventsOf(eventSpy).size(), 2 + 3 + 1);
    QCOMPARE(rows.count(), rowCalls + 1);  // metrics delivered again after the reset
    QCOMPARE(rows.last().at(0).value<QVector<tb::core::MetricsRow>>().at(0).step, 5);
    QVERIFY(!follower.done().has_value());  // the new file has not said so
  }

  void readsConfigAndCodebookFiles() {
    QTemporaryDir run;
    RunFollower follower;
    QSignalSpy settings(&follower, &RunFollower::settingsChanged);
    QSignalSpy codebook(&follower, &RunFollower::codebookCountsChanged);
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    QVERIFY(!follower.settings().has_value());

    writeBytes(run.filePath(QStringLiteral("config.json")),
               R"({"loss": {"discr_start_step": 250, "adversarial_weight": 0.1},
                   "train": {"max_steps": 1000},
                   "model": {"quantizer": {"codebook_size": 8}}})");
    QVERIFY(pollAndWait(follower));
    QCOMPARE(settings.count(), 1);
    QCOMPARE(follower.settings()->discrStartStep, 250);
    QCOMPARE(follower.settings()->maxSteps, 1000);
    QCOMPARE(follower.settings()->codebookSize, 8);
    QVERIFY(follower.settings()->ganEnabled);
    QVERIFY(follower.configText().contains(QLatin1String("\"codebook_size\": 8")));
    // The same file as a ConfigDocument: typed, validated by core, naming the file it came from.
    QCOMPARE(follower.config().config().train.max_steps, 1000);
    QCOMPARE(follower.config().file(), run.filePath(QStringLiteral("config.json")));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(settings.count(), 1);  // unchanged file, no signal

    // Keys left out take core's defaults (adversarial_weight 0.1, max_steps 10000).
    writeBytes(run.filePath(QStringLiteral("config.json")), R"({"loss": {}})");
    QFile(run.filePath(QStringLiteral("config.json")))
        .setFileTime(QDateTime::currentDateTime().addSecs(5), QFileDevice::FileModificationTime);
    QVERIFY(pollAndWait(follower));
    QCOMPARE(settings.count(), 2);
    QCOMPARE(follower.settings()->maxSteps, 10000);
    QCOMPARE(follower.settings()->discrStartStep, 0);
    QCOMPARE(follower.configText(), QStringLiteral(R"({"loss": {}})"));

    QVERIFY(QDir(run.path()).mkdir(QStringLiteral("codebook")));
    const QString step20 = run.filePath(QStringLiteral("codebook/step_20.safetensors"));
    writeCounts(step20, {5, 0, 3, 0, 0, 1, 0, 0});
    writeBytes(run.filePath(QStringLiteral("codebook/notes.txt")), "ignored");
    writeBytes(run.filePath(QStringLiteral("codebook/step_x.safetensors")), "ignored");
    QVERIFY(pollAndWait(follower));
    QCOMPARE(codebook.count(), 1);
    QCOMPARE(codebook.last().at(0).toLongLong(), 20);
    QCOMPARE(follower.codebookSteps(), QList<qint64>{20});
    const auto counts = RunFollower::readCodebookCounts(follower.codebookFile(20));
    QVERIFY(counts.has_value());
    QCOMPARE(*counts, QVector<qint64>({5, 0, 3, 0, 0, 1, 0, 0}));

    writeCounts(run.filePath(QStringLiteral("codebook/step_40.safetensors")),
                {1, 1, 1, 1, 1, 1, 1, 1});
    QVERIFY(pollAndWait(follower));
    QCOMPARE(codebook.count(), 2);
    QCOMPARE(follower.codebookSteps(), QList<qint64>({20, 40}));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(codebook.count(), 2);

    // A rewritten file is announced again.
    writeCounts(step20, {9, 9, 9, 9, 9, 9, 9, 9});
    QFile(step20).setFileTime(QDateTime::currentDateTime().addSecs(10),
                              QFileDevice::FileModificationTime);
    QVERIFY(pollAndWait(follower));
    QCOMPARE(codebook.count(), 3);
    QCOMPARE(codebook.last().at(0).toLongLong(), 20);
    QCOMPARE(follower.codebookFile(99), QString());
  }

  void codebookCountsThatCannotBeRead() {
    QTemporaryDir dir;
    QString error;
    QVERIFY(!RunFollower::readCodebookCounts(dir.filePath(QStringLiteral("none")), &error));
    QVERIFY(error.contains(QLatin1String("none")));

    tb::core::SafetensorsWriter floats;
    const float values[2] = {1.0F, 2.0F};
    floats.add("counts", tb::core::DType::F32, {2}, values, sizeof(values));
    const QString floatFile = dir.filePath(QStringLiteral("f.safetensors"));
    floats.writeFile(QFile::encodeName(floatFile).toStdString());
    QVERIFY(!RunFollower::readCodebookCounts(floatFile, &error));
    QVERIFY2(error.contains(QLatin1String("F32")), qPrintable(error));

    tb::core::SafetensorsWriter other;
    const std::int32_t ints[3] = {4, 0, 2};
    other.add("histogram", tb::core::DType::I32, {3}, ints, sizeof(ints));
    const QString otherFile = dir.filePath(QStringLiteral("o.safetensors"));
    other.writeFile(QFile::encodeName(otherFile).toStdString());
    QVERIFY(!RunFollower::readCodebookCounts(otherFile, &error));
    QVERIFY2(error.contains(QLatin1String("counts")), qPrintable(error));

    writeBytes(otherFile, "\x08garbage");
    QVERIFY(!RunFollower::readCodebookCounts(otherFile, &error));
  }

  // A run directory whose files are FIFOs nobody writes (what a hung network file system looks
  // like to a reader): the follower's thread keeps serving events, a timer of 10 ms fires within
  // 100 ms while the follower polls every 5 ms, and destroying the follower returns at once.
  void fifoNobodyWritesLeavesTheEventLoopResponsive() {
    QTemporaryDir run;
    QVERIFY(run.isValid());
    for (const char* name : {"metrics.jsonl", "events.jsonl", "config.json"}) {
      QVERIFY(::mkfifo(QFile::encodeName(run.filePath(QLatin1String(name))).constData(), 0600) ==
              0);
    }
    QElapsedTimer clock;
    clock.start();
    auto follower = std::make_unique<RunFollower>();
    follower->setPollInterval(5);
    follower->setRunDirectory(run.path());
    follower->start();
    follower->poll();
    qint64 firedAfterMs = -1;
    QElapsedTimer timerClock;
    timerClock.start();
    QTimer::singleShot(10, [&] { firedAfterMs = timerClock.elapsed(); });
    QTRY_VERIFY_WITH_TIMEOUT(firedAfterMs >= 0, 5000);
    QVERIFY2(firedAfterMs < 100, qPrintable(QString::number(firedAfterMs)));
    QVERIFY(follower->waitForReads(5000));
    QCOMPARE(follower->rowCount(), 0);
    QVERIFY(!follower->settings());
    follower.reset();
    QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
  }

  // A read that stalls (the codebook file became a FIFO nobody writes: opening it waits for a
  // writer, as a read on a hung network file system waits for the server) holds the follower's
  // thread only: the caller's events are processed within 100 ms, polls are still accepted, and
  // destroying the follower does not wait for the read.
  void stalledReadLeavesTheEventLoopResponsive() {
    QTemporaryDir run;
    QVERIFY(run.isValid());
    QVERIFY(QDir(run.path()).mkdir(QStringLiteral("codebook")));
    const QString file = run.filePath(QStringLiteral("codebook/step_5.safetensors"));
    writeCounts(file, {1, 2});
    auto follower = std::make_unique<RunFollower>();
    follower->setRunDirectory(run.path());
    QVERIFY(follower->waitForReads());
    QCOMPARE(follower->codebookSteps(), (QList<qint64>{5}));
    QVERIFY(QFile::remove(file));
    const QByteArray fifo = QFile::encodeName(file);
    QVERIFY(::mkfifo(fifo.constData(), 0600) == 0);

    QElapsedTimer clock;
    clock.start();
    follower->requestCodebookCounts(5);  // stalls the follower's thread in open()
    follower->poll();                    // queued behind it
    qint64 firedAfterMs = -1;
    QTimer::singleShot(10, [&] { firedAfterMs = clock.elapsed(); });
    QTRY_VERIFY_WITH_TIMEOUT(firedAfterMs >= 0, 5000);
    QVERIFY2(firedAfterMs < 100, qPrintable(QString::number(firedAfterMs)));
    QVERIFY(!follower->waitForReads(50));  // still stalled: nothing delivered, nothing waited for
    QCOMPARE(follower->pendingReads(), 2);
    follower.reset();
    QVERIFY2(clock.elapsed() < 2000, qPrintable(QString::number(clock.elapsed())));

    // Let the stalled read end (a writer opens and closes the FIFO) so the thread can finish.
    int writer = -1;
    for (int i = 0; i < 200 && writer < 0; ++i) {
      writer = ::open(fifo.constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (writer < 0) QTest::qWait(10);  // ENXIO until the reader is in open()
    }
    QVERIFY(writer >= 0);
    ::close(writer);
  }

  // The codebook file is read on the follower's thread and delivered by a signal.
  // The lock probe and the classic VQ reference, read on the follower's thread: the lock is
  // probed only once the run has written something (a starting trainer must not meet it).
  void probesTheLockAndReadsTheReference() {
    QTemporaryDir run;
    RunFollower follower;
    QSignalSpy reference(&follower, &RunFollower::referenceCodecChanged);
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    QVERIFY(!follower.trainerHoldsLock().has_value());  // nothing written yet: not probed
    QVERIFY(!follower.referenceCodec());

    auto live = std::make_unique<tb::test::TrainerLock>(run.path());
    appendBytes(run.filePath(QStringLiteral("metrics.jsonl")), metricsLine(1, 0.5));
    QVERIFY(pollAndWait(follower));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(follower.trainerHoldsLock(), std::optional<bool>(true));
    live.reset();  // the trainer is gone
    QVERIFY(pollAndWait(follower));
    QCOMPARE(follower.trainerHoldsLock(), std::optional<bool>(false));

    QVERIFY(tb::test::writeReferenceCodec(run.path(), 27.5));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(reference.count(), 1);
    QCOMPARE(follower.referenceCodec().value_or(tb::core::ReferenceCodecInfo{}).valid_psnr,
             std::optional<double>(27.5));
    QVERIFY(pollAndWait(follower));
    QCOMPARE(reference.count(), 1);  // unchanged file: not read again
  }

  void codebookCountsAreReadOffTheCallersThread() {
    QTemporaryDir run;
    QVERIFY(run.isValid());
    QVERIFY(QDir(run.path()).mkdir(QStringLiteral("codebook")));
    writeCounts(run.filePath(QStringLiteral("codebook/step_4.safetensors")), {1, 0, 3});
    RunFollower follower;
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    QSignalSpy read(&follower, &RunFollower::codebookCountsRead);
    follower.requestCodebookCounts(4);
    QCOMPARE(read.count(), 0);  // not read on this thread
    QVERIFY(follower.waitForReads());
    QCOMPARE(read.count(), 1);
    QCOMPARE(read.first().at(0).toLongLong(), 4);
    QCOMPARE(read.first().at(1).value<QVector<qint64>>(), (QVector<qint64>{1, 0, 3}));
    QVERIFY(read.first().at(2).toString().isEmpty());
  }

  void pollsOnItsOwnTimer() {
    QTemporaryDir run;
    RunFollower follower;
    follower.setPollInterval(20);
    QSignalSpy rows(&follower, &RunFollower::rowsAppended);
    follower.setRunDirectory(run.path());
    QVERIFY(follower.waitForReads());
    follower.start();
    QVERIFY(follower.isActive());
    appendBytes(run.filePath(QStringLiteral("metrics.jsonl")), metricsLine(1, 1.0));
    QTRY_COMPARE_WITH_TIMEOUT(rows.count(), 1, 2000);
    appendBytes(run.filePath(QStringLiteral("metrics.jsonl")), metricsLine(2, 0.9));
    QTRY_COMPARE_WITH_TIMEOUT(rows.count(), 2, 2000);
    follower.stop();
    QVERIFY(!follower.isActive());
  }
};

QTEST_GUILESS_MAIN(TestRunFollower)
#include "test_run_follower.moc"
