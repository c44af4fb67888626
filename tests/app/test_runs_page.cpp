// The Runs browser on run directories written here with the real formats (core's MetricsWriter
// and event encoder): status from the lock and the last done event, step and best metrics from
// metrics.jsonl, live updates on the timer, sorting, opening, the remembered folder, and the
// recent-runs list. Screenshot: TB_APP_SCREENSHOT_DIR/runs-page.png.
#include "app/control/run_summary_reader.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/window_settings.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "tests/app/stalled_files.h"

#include <QDir>
#include <QFile>
#include <QHeaderView>
#include <QObject>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

using tb::app::RunsPage;
using tb::app::RunSummary;
using tb::app::RunSummaryReader;
using tb::app::WindowSettings;

namespace {

void writeText(const QString& path, const QByteArray& bytes,
               QIODevice::OpenMode mode = QIODevice::WriteOnly) {
  QFile file(path);
  QVERIFY2(file.open(mode), qPrintable(path));
  QCOMPARE(file.write(bytes), bytes.size());
}

QByteArray eventLine(const tb::core::Event& event) {
  return QByteArray::fromStdString(tb::core::encodeEvent(event)) + '\n';
}

// A run directory as the trainer leaves it: config.json, metrics rows, events.
void makeRun(const QString& dir, const std::vector<tb::core::MetricsRow>& rows,
             const std::vector<tb::core::Event>& events) {
  QVERIFY(QDir().mkpath(dir));
  writeText(dir + QStringLiteral("/config.json"), "{\"version\": 1}\n");
  if (!rows.empty()) {
    tb::core::MetricsWriter writer((dir + QStringLiteral("/metrics.jsonl")).toStdString());
    for (const auto& row : rows) writer.append(row);
  }
  QByteArray bytes;
  for (const auto& event : events) bytes += eventLine(event);
  if (!events.empty()) writeText(dir + QStringLiteral("/events.jsonl"), bytes);
}

tb::core::MetricsRow trainRow(std::int64_t step, double loss) {
  return {step, 1.7e9 + static_cast<double>(step), {{"train/loss", loss}}};
}

tb::core::MetricsRow validRow(std::int64_t step, double psnr, double ssim, double lpips) {
  return {step,
          1.7e9 + static_cast<double>(step),
          {{"valid/psnr", psnr}, {"valid/ssim", ssim}, {"valid/lpips", lpips}}};
}

int rowOf(const RunsPage& page, const QString& name) {
  for (int row = 0; row < page.rowCount(); ++row) {
    if (page.cellText(row, RunsPage::Name) == name) return row;
  }
  return -1;
}

}  // namespace

class TestRunsPage : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_runs = m_dir.filePath(QStringLiteral("runs"));
    using tb::core::DoneEvent;
    using tb::core::HelloEvent;
    using tb::core::MetricEvent;  // beta's and alpha's trainer was older: it sent metric events
    makeRun(m_runs + "/alpha",
            {trainRow(1, 0.5),
             validRow(100, 20.0, 0.5, 0.3),
             validRow(200, 25.0, 0.7, 0.25),
             {200, 1.7e9 + 200, {{"valid/rfid", 57.25}, {"eval/rfid_samples", 256}}},
             validRow(300, 22.0, 0.6, 0.2),
             {300, 1.7e9 + 300, {{"valid/rfid", 41.5}, {"eval/rfid_samples", 256}}}},
            {HelloEvent{}, MetricEvent{300, {}}, DoneEvent{"completed", 300}});
    makeRun(m_runs + "/beta", {trainRow(1, 0.9), trainRow(40, 0.4)},
            {HelloEvent{}, MetricEvent{40, {}}});  // no done: the trainer died
    makeRun(m_runs + "/gamma", {trainRow(7, 0.7)}, {HelloEvent{}});
    makeRun(m_runs + "/delta", {trainRow(3, 0.8)}, {HelloEvent{}, DoneEvent{"failed", {}}});
    makeRun(m_runs + "/epsilon", {trainRow(50, 0.3)},
            {HelloEvent{}, DoneEvent{"completed", 20}, HelloEvent{}, DoneEvent{"stopped", 50}});
    makeRun(m_runs + "/fresh", {}, {});
    QVERIFY(QDir().mkpath(m_runs + "/not_a_run"));
    writeText(m_runs + "/gamma/.lock", "1234\n");
  }

  void summariesReadTheFiles() {
    RunSummaryReader reader;
    const RunSummary alpha = reader.read(m_runs + "/alpha");
    QCOMPARE(alpha.name, QStringLiteral("alpha"));
    QCOMPARE(alpha.status, RunSummary::Status::Completed);
    QCOMPARE(alpha.step, std::optional<qint64>(300));
    QCOMPARE(alpha.bestPsnr, std::optional<double>(25.0));
    QCOMPARE(alpha.bestSsim, std::optional<double>(0.7));
    QCOMPARE(alpha.bestLpips, std::optional<double>(0.2));
    QVERIFY(alpha.modified.isValid());
    QCOMPARE(reader.read(m_runs + "/beta").status, RunSummary::Status::Interrupted);
    QCOMPARE(reader.read(m_runs + "/delta").status, RunSummary::Status::Failed);
    QCOMPARE(reader.read(m_runs + "/epsilon").status, RunSummary::Status::Stopped);
    QCOMPARE(reader.read(m_runs + "/fresh").status, RunSummary::Status::New);
    QVERIFY(!reader.read(m_runs + "/beta").bestPsnr);
    QVERIFY(!RunSummaryReader::isRunDirectory(m_runs + "/not_a_run"));
  }

  // The trainer sends no metric events any more: a run's events.jsonl holds hello, progress
  // events, warnings and done, and its step and best scores come from metrics.jsonl alone.
  void summaryOfARunWhoseEventsHoldNoMetricLines() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("current"));
    std::vector<tb::core::Event> events{tb::core::HelloEvent{}};
    // More progress lines than the 64 KiB of events.jsonl read for the last event.
    for (std::int64_t step = 1; step <= 2000; ++step) {
      events.emplace_back(
          tb::core::ProgressEvent{step, 2000, 10.0, 0.1 * static_cast<double>(2000 - step)});
    }
    events.emplace_back(tb::core::DoneEvent{"completed", std::int64_t{2000}});
    makeRun(run,
            {trainRow(1, 0.5), validRow(1000, 21.0, 0.6, 0.3), trainRow(2000, 0.2),
             validRow(2000, 24.0, 0.5, 0.35)},
            events);
    QFile written(run + QStringLiteral("/events.jsonl"));
    QVERIFY(written.open(QIODevice::ReadOnly));
    QVERIFY(written.size() > 64 * 1024);
    QVERIFY(!written.readAll().contains("\"type\":\"metric\""));
    RunSummaryReader reader;
    const RunSummary summary = reader.read(run);
    QCOMPARE(summary.status, RunSummary::Status::Completed);
    QCOMPARE(summary.step, std::optional<qint64>(2000));
    QCOMPARE(summary.bestPsnr, std::optional<double>(24.0));
    QCOMPARE(summary.bestSsim, std::optional<double>(0.6));
    QCOMPARE(summary.bestLpips, std::optional<double>(0.3));

    // Killed after its last row: no done, so Interrupted, at the step of the last row.
    makeRun(dir.filePath(QStringLiteral("killed")), {trainRow(1, 0.5), trainRow(40, 0.4)},
            {tb::core::HelloEvent{}, tb::core::ProgressEvent{40, 100, 1.0, 60.0}});
    const RunSummary killed = reader.read(dir.filePath(QStringLiteral("killed")));
    QCOMPARE(killed.status, RunSummary::Status::Interrupted);
    QCOMPARE(killed.step, std::optional<qint64>(40));
  }

  void aHeldLockMeansRunning() {
    const QString lock = m_runs + "/gamma/.lock";
    const int fd = ::open(QFile::encodeName(lock).constData(), O_RDWR);
    QVERIFY(fd >= 0);
    QCOMPARE(::flock(fd, LOCK_EX | LOCK_NB), 0);
    QVERIFY(RunSummaryReader::isLocked(m_runs + "/gamma"));
    RunSummaryReader reader;
    QCOMPARE(reader.read(m_runs + "/gamma").status, RunSummary::Status::Running);
    ::close(fd);  // releases the lock
    QVERIFY(!RunSummaryReader::isLocked(m_runs + "/gamma"));
    QCOMPARE(reader.read(m_runs + "/gamma").status, RunSummary::Status::Interrupted);
    // The probe released its own lock: a trainer could take it now.
    const int again = ::open(QFile::encodeName(lock).constData(), O_RDWR);
    QCOMPARE(::flock(again, LOCK_EX | LOCK_NB), 0);
    ::close(again);
  }

  void pageListsTheRunsOfTheFolder() {
    RunsPage page;
    page.setFolder(m_runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    QCOMPARE(page.rowCount(), 6);  // not_a_run has no config.json
    const int alpha = rowOf(page, QStringLiteral("alpha"));
    QVERIFY(alpha >= 0);
    QCOMPARE(page.cellText(alpha, RunsPage::Status), QStringLiteral("completed"));
    QCOMPARE(page.cellText(alpha, RunsPage::Step), QStringLiteral("300"));
    QCOMPARE(page.cellText(alpha, RunsPage::Psnr), QStringLiteral("25.00"));
    QCOMPARE(page.cellText(alpha, RunsPage::Ssim), QStringLiteral("0.7000"));
    QCOMPARE(page.cellText(alpha, RunsPage::Lpips), QStringLiteral("0.2000"));
    QCOMPARE(page.cellText(alpha, RunsPage::Rfid), QStringLiteral("41.50"));  // the lowest
    QCOMPARE(page.cellText(alpha, RunsPage::Rfvd), QStringLiteral("\u2014"));
    QCOMPARE(page.cellText(alpha, RunsPage::Location), QDir::toNativeSeparators(m_runs));
    QCOMPARE(page.cellText(rowOf(page, QStringLiteral("beta")), RunsPage::Status),
             QStringLiteral("interrupted"));
    QCOMPARE(page.cellText(rowOf(page, QStringLiteral("beta")), RunsPage::Psnr),
             QStringLiteral("\u2014"));
    QCOMPARE(page.cellText(rowOf(page, QStringLiteral("delta")), RunsPage::Status),
             QStringLiteral("failed"));
    QCOMPARE(page.cellText(rowOf(page, QStringLiteral("fresh")), RunsPage::Status),
             QStringLiteral("new"));
  }

  void columnsSort() {
    RunsPage page;
    page.setFolder(m_runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    page.view()->sortByColumn(RunsPage::Psnr, Qt::DescendingOrder);
    QCOMPARE(page.cellText(0, RunsPage::Name), QStringLiteral("alpha"));
    page.view()->sortByColumn(RunsPage::Step, Qt::DescendingOrder);
    QCOMPARE(page.cellText(0, RunsPage::Step), QStringLiteral("300"));
    QCOMPARE(page.cellText(1, RunsPage::Step), QStringLiteral("50"));  // numbers, not text
    page.view()->sortByColumn(RunsPage::Name, Qt::AscendingOrder);
    QCOMPARE(page.cellText(0, RunsPage::Name), QStringLiteral("alpha"));
    QCOMPARE(page.cellText(5, RunsPage::Name), QStringLiteral("gamma"));
    page.view()->sortByColumn(RunsPage::Status, Qt::AscendingOrder);  // trouble first
    QCOMPARE(page.cellText(0, RunsPage::Status), QStringLiteral("failed"));
  }

  void followsRunsAsTheyChange() {
    QTemporaryDir dir;
    const QString runs = dir.filePath(QStringLiteral("runs"));
    makeRun(runs + "/live", {trainRow(1, 1.0)}, {tb::core::HelloEvent{}});
    RunsPage page;
    page.setRefreshIntervalMs(50);
    page.setFolder(runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    QCOMPARE(page.rowCount(), 1);
    QCOMPARE(page.cellText(0, RunsPage::Step), QStringLiteral("1"));

    {  // the trainer appends a validation row and then finishes
      tb::core::MetricsWriter writer((runs + "/live/metrics.jsonl").toStdString());
      writer.append(validRow(10, 31.5, 0.9, 0.1));
    }
    QTRY_COMPARE(page.cellText(0, RunsPage::Step), QStringLiteral("10"));
    QCOMPARE(page.cellText(0, RunsPage::Psnr), QStringLiteral("31.50"));
    writeText(runs + "/live/events.jsonl", eventLine(tb::core::DoneEvent{"completed", 10}),
              QIODevice::Append);
    QTRY_COMPARE(page.cellText(0, RunsPage::Status), QStringLiteral("completed"));

    // metrics.jsonl rewritten shorter (a new run in the same place): read from the start again
    QFile::remove(runs + "/live/metrics.jsonl");
    makeRun(runs + "/live", {validRow(2, 12.0, 0.2, 0.6)}, {});
    QTRY_COMPARE(page.cellText(0, RunsPage::Psnr), QStringLiteral("12.00"));

    // a new run appears, a run disappears
    makeRun(runs + "/second", {trainRow(5, 0.5)}, {});
    QTRY_COMPARE(page.rowCount(), 2);
    QVERIFY(QDir(runs + "/live").removeRecursively());
    QTRY_COMPARE(page.rowCount(), 1);
    QCOMPARE(page.cellText(0, RunsPage::Name), QStringLiteral("second"));
  }

  void doubleClickOpensTheRun() {
    RunsPage page;
    page.setFolder(m_runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    page.resize(1000, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy open(&page, &RunsPage::openRequested);
    const int row = rowOf(page, QStringLiteral("delta"));
    const QRect rect = page.view()->visualRect(page.view()->model()->index(row, 0));
    QTest::mouseClick(page.view()->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(open.count(), 0);  // a single click only selects
    QTest::mouseDClick(page.view()->viewport(), Qt::LeftButton, {}, rect.center());
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.first().first().toString(), QDir::cleanPath(m_runs + "/delta"));
  }

  // A run whose metrics and events are FIFOs nobody writes (a hung network file system, to a
  // reader): the page lists the folder on its reading thread and the event loop keeps serving
  // a 10 ms timer within 100 ms.
  void stalledRunFilesLeaveThePageResponsive() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("runs/stalled"));
    makeRun(run, {}, {});
    QStringList fifos;
    for (const char* name : {"metrics.jsonl", "events.jsonl"}) {
      fifos << QDir(run).filePath(QLatin1String(name));
      QFile::remove(fifos.back());
      QVERIFY(tb::test::makeStalledFile(fifos.back()));
    }
    RunsPage page;
    page.setFolder(dir.filePath(QStringLiteral("runs")));
    const qint64 latency = tb::test::timerLatencyMs();
    QVERIFY2(latency >= 0 && latency < 100, qPrintable(QString::number(latency)));
    QVERIFY(tb::test::releaseStalledFiles(fifos, [&] { return page.waitForReads(20); }));
    QCOMPARE(page.rowCount(), 1);  // listed once the reads end
  }

  void runsOpenedElsewhereAreListedToo() {
    QTemporaryDir elsewhere;
    const QString cluster = elsewhere.filePath(QStringLiteral("mnt/cluster/run7"));
    makeRun(cluster, {trainRow(70, 0.1)}, {tb::core::HelloEvent{}});
    RunsPage page;
    page.setFolder(m_runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    QVERIFY(page.addRunDirectory(cluster));
    QVERIFY(!page.addRunDirectory(cluster));
    QVERIFY(page.waitForReads());
    QCOMPARE(page.runDirectories(), QStringList{cluster});
    QCOMPARE(page.rowCount(), 7);
    const int row = rowOf(page, QStringLiteral("run7"));
    QCOMPARE(page.cellText(row, RunsPage::Location),
             QDir::toNativeSeparators(elsewhere.filePath(QStringLiteral("mnt/cluster"))));
    QCOMPARE(page.pathAt(row), cluster);
  }

  // Issue 39: in a window 1024 px wide the page is about 810 px across; the Location column is
  // in view there, and a run from another folder stands out from the runs folder's own.
  void locationIsInViewAt1024() {
    QTemporaryDir elsewhere;
    const QString cluster = elsewhere.filePath(QStringLiteral("mnt/cluster/run8"));
    makeRun(cluster, {trainRow(80, 0.1)}, {tb::core::HelloEvent{}});
    RunsPage page;
    page.resize(1024 - 160 - 2, 480);  // the window less its page list
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setFolder(m_runs);
    QVERIFY(page.addRunDirectory(cluster));
    QVERIFY(page.waitForReads());
    QTreeView* view = page.view();
    QVERIFY(view->isVisible());
    QHeaderView* header = view->header();
    QVERIFY(!header->isSectionHidden(RunsPage::Location));
    const int left = header->sectionViewportPosition(RunsPage::Location);
    const int right = left + header->sectionSize(RunsPage::Location);
    QVERIFY2(left >= 0 && right <= view->viewport()->width(),
             qPrintable(QStringLiteral("Location at %1..%2 in a %3 px table")
                            .arg(left)
                            .arg(right)
                            .arg(view->viewport()->width())));
    QVERIFY2(header->sectionSize(RunsPage::Location) >= 120,
             qPrintable(QString::number(header->sectionSize(RunsPage::Location))));
    // The run from elsewhere is drawn in the text colour, the folder's own in grey.
    const int other = rowOf(page, QStringLiteral("run8"));
    const int own = rowOf(page, QStringLiteral("alpha"));
    QVERIFY(other >= 0 && own >= 0);
    const QModelIndex otherCell = view->model()->index(other, RunsPage::Location);
    const QModelIndex ownCell = view->model()->index(own, RunsPage::Location);
    QVERIFY(otherCell.data(Qt::ForegroundRole).value<QBrush>().color() !=
            ownCell.data(Qt::ForegroundRole).value<QBrush>().color());
    QVERIFY(otherCell.data(Qt::ToolTipRole).toString().contains(QLatin1String("outside")));
    QVERIFY(!ownCell.data(Qt::ToolTipRole).toString().contains(QLatin1String("outside")));
    QVERIFY(view->visualRect(otherCell).right() <= view->viewport()->width());
    const QString dir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    QVERIFY(page.grab().save(dir + QStringLiteral("/runs-page-1024.png")));
  }

  void emptyFolderSaysSo() {
    QTemporaryDir dir;
    RunsPage page;
    page.setFolder(dir.path());
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    QCOMPARE(page.rowCount(), 0);
    auto* stack = page.findChild<QStackedWidget*>();
    QVERIFY(stack);
    QVERIFY(stack->currentWidget() != page.view());
    page.setFolder(dir.filePath(QStringLiteral("missing")));
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    QVERIFY(stack->currentWidget() != page.view());
  }

  void folderIsRemembered() {
    {
      RunsPage page;
      page.setFolder(m_runs);
      QVERIFY(page.waitForReads());  // the folder is read off this thread
    }
    RunsPage again;
    QVERIFY(again.waitForReads());
    QCOMPARE(again.folder(), QDir::cleanPath(m_runs));
    QCOMPARE(again.rowCount(), 6);
  }

  void recentRunsAreCappedAndDeduplicated() {
    WindowSettings settings;
    settings.clearRecentRuns();
    for (int i = 0; i < 12; ++i) settings.addRecentRun(QStringLiteral("/runs/r%1").arg(i));
    settings.addRecentRun(QStringLiteral("/runs/r5"));
    const QStringList recent = settings.recentRuns();
    QCOMPARE(recent.size(), WindowSettings::kMaxRecentRuns);
    QCOMPARE(recent.first(), QStringLiteral("/runs/r5"));
    QCOMPARE(recent.at(1), QStringLiteral("/runs/r11"));
    QCOMPARE(recent.count(QStringLiteral("/runs/r5")), 1);
    QVERIFY(!recent.contains(QStringLiteral("/runs/r1")));
    settings.clearRecentRuns();
    QVERIFY(settings.recentRuns().isEmpty());
  }

  void screenshot() {
    RunsPage page;
    page.setFolder(m_runs);
    QVERIFY(page.waitForReads());  // the folder is read off this thread
    page.setCurrentRun(m_runs + "/alpha");
    page.view()->sortByColumn(RunsPage::Modified, Qt::DescendingOrder);
    page.resize(1104, 560);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QTest::qWait(20);
    const QString dir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    QVERIFY(page.grab().save(dir + QStringLiteral("/runs-page.png")));
  }

 private:
  QTemporaryDir m_dir;
  QString m_runs;
};

QTEST_MAIN(TestRunsPage)
#include "test_runs_page.moc"
