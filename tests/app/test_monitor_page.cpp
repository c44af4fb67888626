// MonitorPage on run directories written the way the trainer writes them: curves in the right
// panels, PSNR over wall-clock time, the discriminator marker, progress and ETA, the alert banner
// and its markers, smoothing and x-axis choices, live appends, rollbacks, overlays, the codebook
// tab, and curves actually drawn in a grabbed image.
#include "app/gui/pages/monitor/monitor_page.h"

#include "app/control/run_follower.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/metric_chooser.h"
#include "app/gui/pages/run_progress_view.h"
#include "core/event_protocol.h"
#include "core/metrics_log.h"
#include "core/safetensors.h"
#include "tests/app/reference_codec_file.h"
#include "tests/app/stalled_files.h"
#include "tests/app/trainer_lock.h"
#include "widgets/codebook_view.h"
#include "widgets/curve_plot.h"
#include "widgets/qcustomplot_no_keywords.h"

#include <QDir>
#include <QFile>
#include <QImage>
#include <QObject>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

using tb::app::MonitorPage;
using tb::widgets::CurvePlot;

namespace {

constexpr double kStart = 1.7e9;

void writeFile(const QString& path, const QByteArray& bytes, bool append = false) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | (append ? QIODevice::Append : QIODevice::Truncate)));
  QCOMPARE(file.write(bytes), bytes.size());
}

QByteArray line(const tb::core::Event& event) {
  return QByteArray::fromStdString(tb::core::encodeEvent(event)) + '\n';
}

QByteArray trainRow(std::int64_t step, double loss, double lrScale = 1.0) {
  std::vector<std::pair<std::string, double>> values = {
      {"train/loss", loss},
      {"train/recon_loss", loss * 0.8},
      {"train/grad_norm", 2.0 + std::sin(step * 0.1)},
      {"train/lr", lrScale * 1e-4 * std::min(1.0, step / 50.0)},
      {"perf/it_per_s", 0.5},
      {"perf/data_wait_fraction", 0.01},
  };
  if (step >= 100) {
    values.push_back({"train/gan_loss", 0.3});
    values.push_back({"train/discr_loss", 1.9});
  }
  return QByteArray::fromStdString(
             tb::core::formatMetricsLine({step, kStart + 2.0 * step, values})) +
         '\n';
}

QByteArray validRow(std::int64_t step) {
  return QByteArray::fromStdString(
             tb::core::formatMetricsLine({step,
                                          kStart + 2.0 * step + 1.0,
                                          {{"valid/recon_loss", 0.3},
                                           {"valid/psnr", 12.0 + step / 50.0},
                                           {"valid/ssim", 0.2 + step / 1000.0},
                                           {"valid/codebook_usage", 0.4},
                                           {"valid/perplexity", 20.0 + step / 10.0}}})) +
         '\n';
}

// A run at step 200 of 300: train rows every 2 steps, validation every 50, GAN from step 100,
// a non-finite step at 120 and a rollback at 124, codebook counts at 200.
void writeRun(const QString& dir, double lossScale = 1.0) {
  writeFile(dir + QStringLiteral("/config.json"),
            R"({"version": 1, "loss": {"adversarial_weight": 0.1, "discr_start_step": 100},
                "train": {"max_steps": 300},
                "model": {"quantizer": {"codebook_size": 8}}})");
  QByteArray metrics;
  for (std::int64_t step = 2; step <= 200; step += 2) {
    metrics +=
        trainRow(step, lossScale / (1.0 + 0.02 * step) + 0.02 * std::sin(step * 0.7), lossScale);
    if (step % 50 == 0) {
      metrics += validRow(step);
    }
  }
  writeFile(dir + QStringLiteral("/metrics.jsonl"), metrics);
  tb::core::HelloEvent hello;
  hello.trainer_version = "0.1.0";
  hello.protocol = 1;
  writeFile(
      dir + QStringLiteral("/events.jsonl"),
      line(hello) +
          line(tb::core::WarningEvent{"nonfinite_step", "step 120: non-finite loss, step skipped",
                                      std::int64_t{120}}) +
          line(tb::core::WarningEvent{"rollback",
                                      "rolled back to checkpoints/step_100 with the learning rate "
                                      "scaled by 0.5",
                                      std::int64_t{124}}) +
          line(tb::core::ProgressEvent{200, 300, 0.5, 200.0}));
  QVERIFY(QDir(dir).mkpath(QStringLiteral("codebook")));
  const std::vector<std::int64_t> counts = {40, 12, 0, 3, 0, 0, 7, 0};
  tb::core::SafetensorsWriter writer;
  writer.add("counts", tb::core::DType::I64, {8}, counts.data(), counts.size() * 8);
  writer.writeFile(
      QFile::encodeName(dir + QStringLiteral("/codebook/step_200.safetensors")).toStdString());
}

int pixelsLike(const QImage& image, const QRect& area, const QColor& color) {
  int count = 0;
  for (int y = area.top(); y <= area.bottom(); ++y) {
    for (int x = area.left(); x <= area.right(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - color.red()) + std::abs(c.green() - color.green()) +
              std::abs(c.blue() - color.blue()) <
          60) {
        ++count;
      }
    }
  }
  return count;
}

QRect plotAreaIn(const QWidget* root, const CurvePlot* plot) {
  const QRect rect = plot->customPlot()->axisRect()->rect().adjusted(2, 2, -2, -2);
  return QRect(plot->customPlot()->mapTo(root, rect.topLeft()), rect.size());
}

void settle(MonitorPage& page) {
  for (const QString& id : page.panelIds()) {
    page.panel(id)->replotNow();
  }
  QCoreApplication::processEvents();
}

}  // namespace

class TestMonitorPage : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void showsTheCurvesOfARun() {
    QTemporaryDir run;
    writeRun(run.path());
    MonitorPage page;
    page.resize(1280, 800);
    page.setRunDirectory(run.path());
    QVERIFY(page.waitForReads());
    settle(page);
    QVERIFY(page.isShowingPlot());
    QCOMPARE(page.runDirectory(), run.path());

    // Every metric in the panel of its kind.
    const QStringList shown = page.shownPanelIds();
    for (const char* id : {"loss", "gan", "lr", "grad", "psnr", "quality", "usage", "perplexity",
                           "throughput", "datawait"}) {
      QVERIFY2(shown.contains(QLatin1String(id)), id);
    }
    QVERIFY(!shown.contains(QStringLiteral("other")));
    QCOMPARE(page.curvePlot()->pointCount(QStringLiteral("train/loss")), 100);
    QCOMPARE(page.curvePlot()->pointCount(QStringLiteral("valid/recon_loss")), 4);
    QCOMPARE(page.panel(QStringLiteral("gan"))->pointCount(QStringLiteral("train/gan_loss")), 51);
    QCOMPARE(MonitorPage::panelIdOfMetric(QStringLiteral("train/discr_grad_norm")),
             QStringLiteral("grad"));
    QCOMPARE(MonitorPage::panelIdOfMetric(QStringLiteral("train/quantizer/commitment")),
             QStringLiteral("quantizer"));
    QCOMPARE(MonitorPage::panelIdOfMetric(QStringLiteral("custom")), QStringLiteral("other"));

    // Held-out PSNR over wall-clock time: seconds since the first row (step 2 at kStart + 4).
    CurvePlot* psnr = page.panel(QStringLiteral("psnr"));
    QVERIFY(psnr->isTimeAxis());
    QCOMPARE(psnr->graph(QStringLiteral("valid/psnr"))->data()->at(0)->key, 100.0 + 1.0 - 4.0);
    QCOMPARE(psnr->graph(QStringLiteral("valid/psnr"))->data()->at(0)->value, 13.0);
    QVERIFY(!page.curvePlot()->isTimeAxis());

    // The discriminator's first step, marked and labelled on the loss plot.
    QCOMPARE(page.curvePlot()->markerPosition(QStringLiteral("discr")).value(), 100.0);
    QVERIFY(page.curvePlot()->markerLabel(QStringLiteral("discr")).contains(QLatin1String("100")));
    QCOMPARE(page.panel(QStringLiteral("grad"))->markerPosition(QStringLiteral("discr")).value(),
             100.0);

    // Smoothing: training curves smoothed, validation curves drawn as they are.
    QCOMPARE(page.smoothing(), MonitorPage::kDefaultSmoothing);
    QCOMPARE(page.curvePlot()->smoothing(), MonitorPage::kDefaultSmoothing);
    QCOMPARE(psnr->smoothing(), 0.0);
    auto* slider = page.findChild<QSlider*>(QStringLiteral("smoothingSlider"));
    slider->setValue(90);
    QCOMPARE(page.curvePlot()->smoothing(), 0.9);
    QCOMPARE(page.panel(QStringLiteral("quality"))->smoothing(), 0.0);

    // The chooser hides a metric everywhere, and an empty panel leaves the grid.
    QVERIFY(page.metricChooser()->metrics().contains(QStringLiteral("train/lr")));
    QVERIFY(page.metricChooser()->setChecked(QStringLiteral("train/lr"), false));
    settle(page);
    QVERIFY(!page.panel(QStringLiteral("lr"))->isSeriesVisible(QStringLiteral("train/lr")));
    QVERIFY(!page.shownPanelIds().contains(QStringLiteral("lr")));
    page.metricChooser()->setChecked(QStringLiteral("train/lr"), true);
    settle(page);
    QVERIFY(page.shownPanelIds().contains(QStringLiteral("lr")));
  }

  void drawsTheClassicVqReferenceOnTheHeldOutPsnr() {
    QTemporaryDir run;
    writeRun(run.path());
    MonitorPage page;
    page.resize(1280, 800);
    page.setRunDirectory(run.path());
    settle(page);
    CurvePlot* psnr = page.panel(QStringLiteral("psnr"));
    QVERIFY(!psnr->referenceLineValue(QStringLiteral("reference")).has_value());

    // reference.json appears (training fits the codec before its first step): the next rows
    // bring the line, at the codec's held-out PSNR, named, and in view (above every point).
    QVERIFY(tb::test::writeReferenceCodec(run.path(), 27.5));
    writeFile(run.filePath(QStringLiteral("metrics.jsonl")), validRow(250), true);
    page.pollNow();
    QVERIFY(page.waitForReads());  // the rows arrive from the follower's thread
    settle(page);
    QCOMPARE(psnr->referenceLineValue(QStringLiteral("reference")).value_or(0.0), 27.5);
    QVERIFY2(psnr->referenceLineLabel(QStringLiteral("reference"))
                 .contains(QLatin1String("classic VQ, 10 bits/token: 27.50 dB")),
             qPrintable(psnr->referenceLineLabel(QStringLiteral("reference"))));
    QVERIFY(psnr->customPlot()->yAxis->range().contains(27.5));

    // Another run without one: no line.
    QTemporaryDir other;
    writeRun(other.path());
    page.setRunDirectory(other.path());
    settle(page);
    QVERIFY(!psnr->referenceLineValue(QStringLiteral("reference")).has_value());
  }

  // Every file the Monitor reads is a FIFO nobody writes (what a hung network file system looks
  // like to a reader): metrics, events, config, the lock and the classic VQ reference. The page
  // opens on that run and the event loop keeps serving a 10 ms timer within 100 ms: the reads,
  // the lock probe and the reference read wait on the follower's thread, not on this one.
  void stalledRunFilesLeaveThePageResponsive() {
    QTemporaryDir run;
    QVERIFY(QDir(run.path()).mkpath(QStringLiteral("reference")));
    QStringList fifos;
    for (const char* name :
         {"metrics.jsonl", "events.jsonl", "config.json", ".lock", "reference/reference.json"}) {
      fifos << run.filePath(QLatin1String(name));
      QVERIFY(tb::test::makeStalledFile(fifos.back()));
    }
    MonitorPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setRunDirectory(run.path());
    page.pollNow();
    const qint64 latency = tb::test::timerLatencyMs();
    QVERIFY2(latency >= 0 && latency < 100, qPrintable(QString::number(latency)));
    QCOMPARE(page.runDirectory(), run.path());
    QVERIFY(!page.panel(QStringLiteral("psnr"))->referenceLineValue(QStringLiteral("reference")));
    QVERIFY(tb::test::releaseStalledFiles(fifos, [&] { return page.waitForReads(20); }));
  }

  void progressAndEta() {
    QTemporaryDir run;
    writeRun(run.path());
    const tb::test::TrainerLock live(run.path());
    MonitorPage page;
    page.setRunDirectory(run.path());
    QVERIFY(page.waitForReads());
    tb::app::RunProgressView* progress = page.progressView();
    QCOMPARE(progress->state(), tb::app::RunProgressView::State::Running);
    QVERIFY2(progress->text().contains(QLatin1String("step 200 of 300")),
             qPrintable(progress->text()));
    QCOMPARE(progress->etaText(), QStringLiteral("3m20s"));
    QCOMPARE(progress->value(), progress->maximum() * 2 / 3 + 1);  // 66.67 % rounded

    writeFile(run.filePath(QStringLiteral("events.jsonl")),
              line(tb::core::DoneEvent{"completed", std::int64_t{300}}), true);
    page.pollNow();
    QVERIFY(page.waitForReads());
    QCOMPARE(progress->state(), tb::app::RunProgressView::State::Completed);
    QCOMPARE(progress->value(), progress->maximum());
    QVERIFY(progress->etaText().isEmpty());

    // Without progress events: the last metrics row and config's max_steps.
    QTemporaryDir quiet;
    writeRun(quiet.path());
    const tb::test::TrainerLock alsoLive(quiet.path());
    writeFile(quiet.filePath(QStringLiteral("events.jsonl")), "");
    page.setRunDirectory(quiet.path());
    QVERIFY(page.waitForReads());
    QCOMPARE(page.progressView()->state(), tb::app::RunProgressView::State::Running);
    QVERIFY(page.progressView()->text().contains(QLatin1String("step 200 of 300")));
    // 100 steps at 0.5/s, written as the run control bar and the headless runner write it.
    QCOMPARE(page.progressView()->etaText(), QStringLiteral("3m20s"));
  }

  void alertsAppearCountAndMark() {
    QTemporaryDir run;
    writeRun(run.path());
    const tb::test::TrainerLock live(run.path());
    MonitorPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setRunDirectory(run.path());
    QVERIFY(page.waitForReads());
    tb::app::AlertBanner* banner = page.alertBanner();
    QVERIFY(banner->isVisible());
    QCOMPARE(banner->alertCount(), 2);
    QCOMPARE(banner->alertCount(QStringLiteral("rollback")), 1);
    QCOMPARE(banner->alertCount(QStringLiteral("nonfinite_step")), 1);
    QVERIFY(banner->isCritical());
    QVERIFY2(banner->summaryText().contains(QLatin1String("1 rollback")),
             qPrintable(banner->summaryText()));
    QVERIFY(banner->summaryText().contains(QLatin1String("step 124")));
    // Marked on the loss plot where they happened.
    QList<double> marks;
    for (const QString& id : page.curvePlot()->markerIds()) {
      if (id.startsWith(QLatin1String("alert:"))) {
        marks.append(page.curvePlot()->markerPosition(id).value());
      }
    }
    std::sort(marks.begin(), marks.end());
    QCOMPARE(marks, QList<double>({120.0, 124.0}));

    QSignalSpy dismissed(banner, &tb::app::AlertBanner::dismissed);
    banner->dismiss();
    QVERIFY(!banner->isVisible());
    QCOMPARE(dismissed.count(), 1);

    // A new alert brings the banner back; an error counts as critical.
    writeFile(run.filePath(QStringLiteral("events.jsonl")),
              line(tb::core::WarningEvent{"data_skipped", "skipping a.mp4: no video stream",
                                          std::int64_t{202}}) +
                  line(tb::core::ErrorEvent{"diverged", "5 non-finite steps in a row",
                                            "lower train.lr"}) +
                  line(tb::core::DoneEvent{"failed", std::int64_t{202}}),
              true);
    page.pollNow();
    QVERIFY(page.waitForReads());
    QVERIFY(banner->isVisible());
    QCOMPARE(banner->alertCount(), 4);
    QCOMPARE(banner->alerts().last().code, QStringLiteral("diverged"));
    QVERIFY(banner->alerts().last().message.contains(QLatin1String("lower train.lr")));
    QCOMPARE(page.progressView()->state(), tb::app::RunProgressView::State::Failed);
    QVERIFY(page.progressView()->text().contains(QLatin1String("5 non-finite steps")));
  }

  void wallClockAxisAndLiveRows() {
    QTemporaryDir run;
    writeRun(run.path());
    MonitorPage page;
    page.setRunDirectory(run.path());
    QVERIFY(page.waitForReads());
    page.setXAxis(MonitorPage::XAxis::WallClock);
    CurvePlot* loss = page.curvePlot();
    QVERIFY(loss->isTimeAxis());
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(0)->key, 0.0);
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(1)->key, 4.0);
    QCOMPARE(loss->markerPosition(QStringLiteral("discr")).value(), 196.0);  // step 100
    QVERIFY(page.codebookView()->perplexityPlot()->isTimeAxis());
    page.setXAxis(MonitorPage::XAxis::Step);
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(0)->key, 2.0);
    QCOMPARE(loss->markerPosition(QStringLiteral("discr")).value(), 100.0);

    // Rows appended while the page follows the run.
    const QString metrics = run.filePath(QStringLiteral("metrics.jsonl"));
    writeFile(metrics, trainRow(202, 0.2) + trainRow(204, 0.19), true);
    page.pollNow();
    QVERIFY(page.waitForReads());
    QCOMPARE(loss->pointCount(QStringLiteral("train/loss")), 102);
    // The run went back to step 150 (a rollback or a resume): the points after it are dropped.
    writeFile(metrics, trainRow(152, 0.3), true);
    page.pollNow();
    QVERIFY(page.waitForReads());
    QCOMPARE(loss->pointCount(QStringLiteral("train/loss")), 76);
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(75)->key, 152.0);
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(75)->value, 0.3);

    // metrics.jsonl truncated and started again: the curves start again too.
    writeFile(metrics, trainRow(2, 5.0));
    page.pollNow();
    QVERIFY(page.waitForReads());
    QCOMPARE(loss->pointCount(QStringLiteral("train/loss")), 1);
    QCOMPARE(loss->graph(QStringLiteral("train/loss"))->data()->at(0)->value, 5.0);
    QCOMPARE(loss->markerPosition(QStringLiteral("discr")).value(), 100.0);  // still marked

    // And without anyone polling: the follower's own timer reads in the background.
    writeFile(metrics, trainRow(4, 4.0) + trainRow(6, 3.0), true);
    QTRY_COMPARE_WITH_TIMEOUT(loss->pointCount(QStringLiteral("train/loss")), 3, 5000);
  }

  void overlaysAnotherRun() {
    QTemporaryDir runs;
    const QString a = runs.filePath(QStringLiteral("run-a"));
    const QString b = runs.filePath(QStringLiteral("run-b"));
    QVERIFY(QDir().mkpath(a));
    QVERIFY(QDir().mkpath(b));
    writeRun(a);
    writeRun(b);
    const tb::test::TrainerLock liveA(a);
    MonitorPage page;
    QVERIFY(!page.addOverlayRun(b));  // nothing open to overlay on
    page.setRunDirectory(a);
    QVERIFY(page.waitForReads());
    QVERIFY(page.addOverlayRun(b));
    QVERIFY(page.waitForReads());
    QVERIFY(!page.addOverlayRun(b));  // once
    QVERIFY(!page.addOverlayRun(a));  // not the open run itself
    QCOMPARE(page.overlayRuns(), QStringList{b});
    const QString overlay = page.seriesName(1, QStringLiteral("train/loss"));
    QCOMPARE(overlay, QStringLiteral("train/loss \u00b7 run-b"));
    CurvePlot* loss = page.curvePlot();
    QCOMPARE(loss->pointCount(overlay), 100);
    // Each run in a colour of its own (as TensorBoard and W&B draw runs); a metric keeps its
    // line in every run, and the legend names it once.
    QCOMPARE(loss->seriesColor(QStringLiteral("train/loss")), MonitorPage::runColor(0));
    QCOMPARE(loss->seriesColor(overlay), MonitorPage::runColor(1));
    QVERIFY(MonitorPage::runColor(0) != MonitorPage::runColor(1));
    loss->replotNow();
    QCOMPARE(loss->graph(overlay)->pen().style(),
             loss->graph(QStringLiteral("train/loss"))->pen().style());
    // Alerts are the open run's: the overlay's rollback is not counted twice.
    QCOMPARE(page.alertBanner()->alertCount(), 2);
    page.clearOverlayRuns();
    QCOMPARE(loss->pointCount(overlay), -1);
    QVERIFY(page.overlayRuns().isEmpty());
  }

  void codebookTabShowsTheLatestCounts() {
    QTemporaryDir run;
    writeRun(run.path());
    MonitorPage page;
    page.setRunDirectory(run.path());
    QVERIFY(page.waitForReads());
    tb::widgets::CodebookView* codebook = page.codebookView();
    QCOMPARE(codebook->shownStep(), 200);
    QCOMPARE(codebook->codebookSize(), 8);
    QCOMPARE(codebook->deadCodeShare(), 0.5);
    QCOMPARE(
        codebook->perplexityPlot()->pointCount(codebook->perplexityPlot()->seriesNames().value(0)),
        4);
    // A newer validation's counts are followed.
    const std::vector<std::int64_t> counts = {1, 1, 1, 1, 1, 1, 1, 0};
    tb::core::SafetensorsWriter writer;
    writer.add("counts", tb::core::DType::I64, {8}, counts.data(), counts.size() * 8);
    writer.writeFile(
        QFile::encodeName(run.filePath(QStringLiteral("codebook/step_250.safetensors")))
            .toStdString());
    page.pollNow();
    QVERIFY(page.waitForReads());
    QCOMPARE(codebook->shownStep(), 250);
    QCOMPARE(codebook->deadCodeShare(), 1.0 / 8.0);
  }

  void aRealTrainerRun() {
    // Written by tokenbench-trainer (see data/monitor_run/README.md): GAN from step 100,
    // stopped at step 153 of 300, validation every 25 steps.
    const QString dir = QStringLiteral(TB_MONITOR_RUN_DIR);
    MonitorPage page;
    page.resize(1280, 1500);  // tall: every panel in the screenshot
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setRunDirectory(dir);
    QVERIFY(page.waitForReads());
    settle(page);
    QCOMPARE(page.runFollower()->rowCount(), 82);
    for (const char* id : {"loss", "quantizer", "gan", "lr", "grad", "psnr", "quality", "usage",
                           "perplexity", "throughput", "steptime", "datawait", "data"}) {
      QVERIFY2(page.shownPanelIds().contains(QLatin1String(id)), id);
    }
    QCOMPARE(page.curvePlot()->pointCount(QStringLiteral("train/loss")), 76);
    QCOMPARE(page.curvePlot()->markerPosition(QStringLiteral("discr")).value(), 100.0);
    QCOMPARE(page.panel(QStringLiteral("gan"))->pointCount(QStringLiteral("train/gan_loss")), 26);
    // Held-out PSNR at 6 validations, over seconds of wall-clock time that only grow.
    QCPGraph* psnr = page.panel(QStringLiteral("psnr"))->graph(QStringLiteral("valid/psnr"));
    QCOMPARE(psnr->dataCount(), 6);
    for (int i = 1; i < 6; ++i) {
      QVERIFY(psnr->data()->at(i)->key > psnr->data()->at(i - 1)->key);
    }
    QCOMPARE(page.progressView()->state(), tb::app::RunProgressView::State::Stopped);
    QVERIFY2(page.progressView()->text().contains(QLatin1String("step 153 of 300")),
             qPrintable(page.progressView()->text()));
    QVERIFY2(!page.alertBanner()->isVisible(),  // this run had nothing to warn about
             qPrintable(page.alertBanner()->summaryText()));

    tb::widgets::CodebookView* codebook = page.codebookView();
    QCOMPARE(codebook->availableSteps(), QList<qint64>({25, 50, 75, 100, 125, 150}));
    QCOMPARE(codebook->shownStep(), 150);
    const auto counts = tb::app::RunFollower::readCodebookCounts(
        dir + QStringLiteral("/codebook/step_150.safetensors"));
    QVERIFY(counts.has_value());
    QCOMPARE(codebook->codebookSize(), static_cast<int>(counts->size()));
    QCOMPARE(codebook->usedCodes(),
             static_cast<qint64>(counts->size() - std::count(counts->cbegin(), counts->cend(), 0)));

    const QImage image = page.grab().toImage();
    QVERIFY(image.save(QStringLiteral(TB_MONITOR_SCREENSHOT_DIR "/monitor-real-run.png")));
    const QRect loss = plotAreaIn(&page, page.curvePlot());
    // train/loss, the second metric of the file, in the second colour (train/recon_loss, the
    // first, lies under train/recon_l1: this run's reconstruction loss is the L1).
    QVERIFY(pixelsLike(image, loss, QColor(0xff7f0e)) > 50);
    page.resize(1280, 800);
    page.setCurrentTab(1);
    settle(page);
    QVERIFY(page.grab().toImage().save(
        QStringLiteral(TB_MONITOR_SCREENSHOT_DIR "/monitor-real-codebook.png")));
  }

  void drawsCurvesAndSavesAScreenshot() {
    QTemporaryDir run;
    const QString dir = run.filePath(QStringLiteral("run-2024-12-01"));
    QVERIFY(QDir().mkpath(dir));
    writeRun(dir);
    MonitorPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setRunDirectory(dir);
    QVERIFY(page.waitForReads());
    settle(page);
    const QImage image = page.grab().toImage();
    QVERIFY(image.save(QStringLiteral(TB_MONITOR_SCREENSHOT_DIR "/monitor-page.png")));
    // The loss curve (Tableau blue) and the GAN plot's second curve (orange) are drawn.
    const QRect loss = plotAreaIn(&page, page.curvePlot());
    QVERIFY2(pixelsLike(image, loss, QColor(0x1f77b4)) > loss.width() / 3,
             "no loss curve in the loss plot");
    const CurvePlot* gan = page.panel(QStringLiteral("gan"));
    const QRect ganArea = plotAreaIn(&page, gan);
    if (gan->isVisible() && ganArea.intersects(image.rect())) {
      QVERIFY(pixelsLike(image, ganArea.intersected(image.rect()), QColor(0xff7f0e)) > 20);
    }
    // The alert banner is on screen, red.
    QVERIFY(page.alertBanner()->isVisible());

    page.setCurrentTab(1);
    settle(page);
    QVERIFY(page.grab().toImage().save(
        QStringLiteral(TB_MONITOR_SCREENSHOT_DIR "/monitor-codebook.png")));

    // Another run overlaid (dashed), over wall-clock time.
    const QString other = run.filePath(QStringLiteral("run-2024-12-02"));
    QVERIFY(QDir().mkpath(other));
    writeRun(other, 1.3);
    QVERIFY(page.addOverlayRun(other));
    QVERIFY(page.waitForReads());
    page.setXAxis(MonitorPage::XAxis::WallClock);
    page.setCurrentTab(0);
    settle(page);
    const QImage overlaid = page.grab().toImage();
    QVERIFY(overlaid.save(QStringLiteral(TB_MONITOR_SCREENSHOT_DIR "/monitor-overlay.png")));
    QVERIFY(pixelsLike(overlaid, plotAreaIn(&page, page.curvePlot()), QColor(0xff7f0e)) >
            loss.width() / 3);
  }
};

QTEST_MAIN(TestMonitorPage)
#include "test_monitor_page.moc"
