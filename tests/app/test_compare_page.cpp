// The Compare page with a real compare folder (tests/app/data/compare_demo, written by
// `tokenbench-trainer compare`): the report, the review (panels, sync, heatmap), the table
// (rows, columns, sort order with the mean row last), exports, the trainer process's failures,
// and, when TB_TEST_TRAINER names a real trainer, a comparison run from the page.
#include "app/control/compare_process.h"
#include "app/control/compare_request.h"
#include "app/control/trainer_location.h"
#include "app/gui/compare_report.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/compare_header_view.h"
#include "app/gui/pages/compare_page.h"
#include "app/gui/pages/compare_review.h"
#include "app/gui/pages/compare_setup_form.h"
#include "app/gui/pages/compare_sort_proxy_model.h"
#include "app/gui/pages/compare_table_model.h"
#include "tests/app/stalled_files.h"
#include "widgets/clip_player.h"
#include "widgets/clip_timeline.h"
#include "widgets/difference_map.h"

#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QHeaderView>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <cmath>

using tb::app::CompareMetric;
using tb::app::ComparePage;
using tb::app::CompareReport;
using tb::app::CompareReview;
using tb::app::CompareTableModel;

namespace {

const QString kDataDir = QStringLiteral(TB_APP_TEST_DATA_DIR);
const QString kShotsDir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
const QString kCompareDemo = kDataDir + QStringLiteral("/compare_demo");

// Copies `from` (recursively) into `to`, leaving out files whose relative path matches `skip`.
bool copyTree(const QString& from, const QString& to, const QString& skip = {}) {
  QDirIterator it(from, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString file = it.next();
    const QString relative = QDir(from).relativeFilePath(file);
    if (!skip.isEmpty() && relative.contains(skip)) continue;
    const QString target = QDir(to).filePath(relative);
    if (!QDir().mkpath(QFileInfo(target).absolutePath()) || !QFile::copy(file, target)) {
      return false;
    }
  }
  return true;
}

// How many of the sampled pixels differ between two grabs of the same widget.
int differingPixels(const QImage& a, const QImage& b) {
  if (a.size() != b.size()) return -1;
  int differing = 0;
  for (int y = 0; y < a.height(); y += 2) {
    for (int x = 0; x < a.width(); x += 2) differing += a.pixel(x, y) != b.pixel(x, y);
  }
  return differing;
}

// The drawn frame of `player`, sampled on a 32 x 32 grid of its frame rectangle in a grab of
// the player: comparable across layouts that resize the frame.
QVector<QRgb> framePixels(tb::widgets::ClipPlayer* player) {
  const QImage grab = player->grab().toImage();
  const QRect r = player->frameRectInPlayer();
  const qreal dpr = grab.devicePixelRatio();
  QVector<QRgb> samples;
  for (int j = 0; j < 32; ++j) {
    for (int i = 0; i < 32; ++i) {
      const int x = r.left() + (2 * i + 1) * r.width() / 64;
      const int y = r.top() + (2 * j + 1) * r.height() / 64;
      samples.append(grab.pixel(int(x * dpr), int(y * dpr)));
    }
  }
  return samples;
}

int differingSamples(const QVector<QRgb>& a, const QVector<QRgb>& b) {
  int differing = 0;
  for (int i = 0; i < std::min(a.size(), b.size()); ++i) differing += a[i] != b[i];
  return differing;
}

// The demo comparison as three tokenizers with the names users give them and, with `lpips`,
// LPIPS values: what a comparison of a run, a public VQGAN and the run's classic VQ holds.
bool writeThreeTokenizerReport(const QString& to, bool lpips) {
  const QHash<QString, QString> renamed{
      {QStringLiteral("untrained"), QStringLiteral("vqgan-imagenet-f16")},
      {QStringLiteral("trained"), QStringLiteral("magvit2-ucf101")}};
  if (!copyTree(kCompareDemo, to)) return false;
  QFile file(QDir(to).filePath(QStringLiteral("metrics.json")));
  if (!file.open(QIODevice::ReadOnly)) return false;
  QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
  file.close();
  auto rename = [&](QJsonObject scores) {
    QJsonObject out;
    for (const QString& name : scores.keys()) {
      QJsonObject m = scores.value(name).toObject();
      if (lpips)
        m.insert(QStringLiteral("lpips"), name == QLatin1String("trained") ? 0.104 : 0.231);
      out.insert(renamed.value(name), m);
      if (name == QLatin1String("untrained")) {
        m.insert(QStringLiteral("psnr"), m.value(QStringLiteral("psnr")).toDouble() + 1.5);
        out.insert(QStringLiteral("classic-vq"), m);
      }
    }
    return out;
  };
  QJsonArray tokenizers;
  QJsonObject classic{{QStringLiteral("name"), QStringLiteral("classic-vq")},
                      {QStringLiteral("checkpoint"), QStringLiteral("/runs/demo/reference")},
                      {QStringLiteral("weights"), QStringLiteral("codec.safetensors")},
                      {QStringLiteral("model_kind"), QStringLiteral("classic_vq")}};
  tokenizers.append(classic);
  for (const QJsonValue& t : root.value(QLatin1String("tokenizers")).toArray()) {
    QJsonObject o = t.toObject();
    o.insert(QStringLiteral("name"), renamed.value(o.value(QLatin1String("name")).toString()));
    tokenizers.append(o);
  }
  root.insert(QStringLiteral("tokenizers"), tokenizers);
  QJsonArray clips = root.value(QLatin1String("clips")).toArray();
  for (int c = 0; c < clips.size(); ++c) {
    QJsonObject clip = clips[c].toObject();
    clip.insert(QStringLiteral("metrics"), rename(clip.value(QLatin1String("metrics")).toObject()));
    clips[c] = clip;
    const QDir strips(QDir(to).filePath(QStringLiteral("clip_%1").arg(c, 3, 10, QLatin1Char('0'))));
    if (!QFile::copy(strips.filePath(QStringLiteral("untrained.png")),
                     strips.filePath(QStringLiteral("classic-vq.png"))) ||
        !QFile::rename(strips.filePath(QStringLiteral("untrained.png")),
                       strips.filePath(QStringLiteral("vqgan-imagenet-f16.png"))) ||
        !QFile::rename(strips.filePath(QStringLiteral("trained.png")),
                       strips.filePath(QStringLiteral("magvit2-ucf101.png"))))
      return false;
  }
  root.insert(QStringLiteral("clips"), clips);
  root.insert(QStringLiteral("mean"), rename(root.value(QLatin1String("mean")).toObject()));
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  file.write(QJsonDocument(root).toJson());
  return true;
}

QString writeScript(const QString& dir, const QString& body) {
  const QString path = QDir(dir).filePath(QStringLiteral("fake-trainer.sh"));
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return {};
  file.write("#!/bin/sh\n" + body.toUtf8() + "\n");
  file.close();
  file.setPermissions(file.permissions() | QFileDevice::ExeOwner);
  return path;
}

}  // namespace

class ComparePageTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void readsTheCompareFolder() {
    QString error;
    const std::optional<CompareReport> report = CompareReport::load(kCompareDemo, &error);
    QVERIFY2(report.has_value(), qPrintable(error));
    QCOMPARE(report->tokenizerCount(), 2);
    QCOMPARE(report->tokenizerName(0), QStringLiteral("untrained"));
    QCOMPARE(report->tokenizerName(1), QStringLiteral("trained"));
    QCOMPARE(report->clipCount(), 4);
    QVERIFY(report->clips()[1].source.rfind("synthetic:", 0) == 0);
    QCOMPARE(report->metrics(), (QVector<CompareMetric>{CompareMetric::Psnr, CompareMetric::Ssim}));
    const double psnr = report->clips()[0].scores[1].psnr;  // "trained"
    QVERIFY(psnr > 5 && psnr < 60);
    QVERIFY(!report->clips()[0].scores[1].lpips);
    QVERIFY(std::isnan(tb::app::metricValue(report->clips()[0].scores[1], CompareMetric::Lpips)));

    bool lossless = false;
    const QVector<tb::widgets::ClipFrames> panels = report->loadPanels(2, &lossless, &error);
    QVERIFY2(panels.size() == 3, qPrintable(error));
    QVERIFY(lossless);
    QCOMPARE(panels[0].size(), report->clips()[2].frames);
    QCOMPARE(panels[1].front().size(), QSize(report->clips()[2].width, report->clips()[2].height));
    QVERIFY(report->outputFiles().contains(QStringLiteral("metrics.json")));
    QVERIFY(report->outputFiles().contains(QStringLiteral("clip_003.gif")));
    QVERIFY(report->outputFiles().contains(QStringLiteral("clip_003/trained.png")));

    QVERIFY(!CompareReport::load(kDataDir, &error));
    QVERIFY2(error.contains(QLatin1String("metrics.json")) &&
                 error.contains(QLatin1String("not a compare folder")),
             qPrintable(error));
    QTemporaryDir broken;
    QFile bad(broken.filePath(QStringLiteral("metrics.json")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{\"tokenizers\": [");
    bad.close();
    QVERIFY(!CompareReport::load(broken.path(), &error));
    QVERIFY2(error.contains(QLatin1String("metrics.json: compare report: invalid JSON")),
             qPrintable(error));
  }

  // The app's side of tests/golden/compare_report_v1.json (the trainer's side writes it through
  // the same core struct): every field reaches the page's report.
  void readsTheGoldenReport() {
    QTemporaryDir dir;
    QVERIFY(QFile::copy(kDataDir + QStringLiteral("/../../golden/compare_report_v1.json"),
                        dir.filePath(QStringLiteral("metrics.json"))));
    QString error;
    const std::optional<CompareReport> report = CompareReport::load(dir.path(), &error);
    QVERIFY2(report, qPrintable(error));
    QCOMPARE(report->tokenizerCount(), 3);
    QCOMPARE(QString::fromStdString(report->tokenizers()[1].checkpoint),
             QStringLiteral("/tmp/h3/a/checkpoints/step_200"));
    QCOMPARE(QString::fromStdString(report->tokenizers()[1].weights),
             QStringLiteral("ema.safetensors"));
    QCOMPARE(tb::app::describeTokenizer(report->tokenizers()[1]),
             QStringLiteral("Tokenbench MAGVIT-v2"));
    QCOMPARE(tb::app::tokenizerSummary(report->tokenizers()[1]),
             QStringLiteral("Tokenbench MAGVIT-v2 \u00b7 2\u00d78\u00d78, 10 bits"));
    // A report written before "source": the model kind.
    tb::core::CompareTokenizer old = report->tokenizers()[1];
    old.source.clear();
    old.token_grid.clear();
    old.bits_per_token = 0;
    QCOMPARE(tb::app::tokenizerSummary(old), QStringLiteral("magvit2"));
    QCOMPARE(tb::app::describeTokenizer(report->tokenizers()[2]),
             QStringLiteral("classic VQ, 8 bits/token"));
    QCOMPARE(report->clipCount(), 4);
    QCOMPARE(QString::fromStdString(report->clips()[1].source), QStringLiteral("synthetic:389"));
    QCOMPARE(report->clips()[1].frames, 5);
    QCOMPARE(report->tokenizerName(1), QStringLiteral("trained"));
    QCOMPARE(report->clips()[1].scores[1].psnr, 13.221343257024392);
    QCOMPARE(*report->clips()[1].scores[1].lpips, 0.2975);
    QCOMPARE(report->tokenizerName(2), QStringLiteral("classic-vq"));
    QCOMPARE(*report->mean()[2].lpips, 0.3461);
    QCOMPARE(report->metrics(), (QVector<tb::app::CompareMetric>{tb::app::CompareMetric::Psnr,
                                                                 tb::app::CompareMetric::Ssim,
                                                                 tb::app::CompareMetric::Lpips}));
  }

  void fallsBackToTheGifs() {
    QTemporaryDir dir;
    QVERIFY(copyTree(kCompareDemo, dir.path(), QStringLiteral(".png")));
    const std::optional<CompareReport> report = CompareReport::load(dir.path());
    QVERIFY(report);
    bool lossless = true;
    QString error;
    const auto panels = report->loadPanels(0, &lossless, &error);
    QVERIFY2(panels.size() == 3, qPrintable(error));
    QVERIFY(!lossless);
    QCOMPARE(panels[2].front().size(), QSize(32, 32));

    CompareReview review;
    review.setReport(report);
    QVERIFY(!review.panelsAreLossless());
    QVERIFY(!review.isHeatmapAvailable());
    review.setHeatmapVisible(true);  // refused: GIF differences would mislead
    QVERIFY(!review.isHeatmapVisible());
  }

  void reviewShowsEveryTokenizerInSync() {
    ComparePage page;
    page.resize(1100, 760);
    QSignalSpy opened(&page, &ComparePage::compareFolderOpened);
    QVERIFY(page.openCompareFolder(kCompareDemo));
    QCOMPARE(opened.count(), 1);
    QVERIFY(page.isShowingReview());
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));

    CompareReview* review = page.review();
    QCOMPARE(review->currentClip(), 0);
    QVERIFY(review->panelsAreLossless());
    const QList<tb::widgets::ClipPlayer*> players = review->players();
    QCOMPARE(players.size(), 3);
    QCOMPARE(players[0]->title(), QStringLiteral("original"));
    QCOMPARE(players[2]->title(), QStringLiteral("trained"));
    QCOMPARE(players[0]->frameCount(), 5);
    QVERIFY(players[2]->captionLines().at(0).startsWith(QLatin1String("PSNR ")));
    QVERIFY(players[2]->captionLines().at(0).endsWith(QLatin1String(" dB")));
    QVERIFY(players[2]->captionLines().at(1).startsWith(QLatin1String("SSIM ")));
    // The frames are the trainer's lossless ones.
    const QImage strip(kCompareDemo + QStringLiteral("/clip_000/trained.png"));
    QCOMPARE(players[2]->frames()[3],
             strip.copy(3 * 32, 0, 32, 32).convertToFormat(QImage::Format_RGB32));

    review->timeline()->setFrameIndex(3);
    for (auto* player : players) QCOMPARE(player->shownFrameIndex(), 3);

    QSignalSpy clipChanged(review, &CompareReview::currentClipChanged);
    review->setCurrentClip(2);
    QCOMPARE(clipChanged.count(), 1);
    QCOMPARE(players[0]->frames()[0],
             QImage(kCompareDemo + QStringLiteral("/clip_002/original.png"))
                 .copy(0, 0, 32, 32)
                 .convertToFormat(QImage::Format_RGB32));
    QCOMPARE(players[0]->shownFrameIndex(), 3);  // the timeline keeps its frame

    review->setZoom(tb::widgets::ClipPlayer::Zoom::X2);
    for (auto* player : players) QCOMPARE(player->zoom(), tb::widgets::ClipPlayer::Zoom::X2);
  }

  void tableSortsAndSelects() {
    ComparePage page;
    QVERIFY(page.openCompareFolder(kCompareDemo));
    page.resize(1100, 760);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    CompareReview* review = page.review();
    QTableView* table = review->tableView();
    QAbstractItemModel* model = table->model();
    QCOMPARE(model->rowCount(), 5);             // 4 clips + mean
    QCOMPARE(model->columnCount(), 2 + 2 * 2);  // clip, source, 2 tokenizers x (PSNR, SSIM)
    QCOMPARE(model->headerData(2, Qt::Horizontal).toString(),
             QStringLiteral("untrained\nPSNR \u2191"));
    QCOMPARE(model->headerData(5, Qt::Horizontal).toString(),
             QStringLiteral("trained\nSSIM \u2191"));
    QCOMPARE(model->index(4, 0).data().toString(), QStringLiteral("mean"));

    const int trainedPsnr = 4;
    for (Qt::SortOrder order : {Qt::DescendingOrder, Qt::AscendingOrder}) {
      table->sortByColumn(trainedPsnr, order);
      double previous = order == Qt::DescendingOrder ? 1e9 : -1e9;
      for (int row = 0; row < 4; ++row) {
        const double value =
            model->index(row, trainedPsnr).data(CompareTableModel::kSortRole).toDouble();
        QVERIFY(order == Qt::DescendingOrder ? value <= previous : value >= previous);
        previous = value;
      }
      QVERIFY(model->index(4, 0).data(CompareTableModel::kIsMeanRole).toBool());  // last either way
    }
    // The mean row holds the mean of the clips.
    double sum = 0;
    for (int row = 0; row < 4; ++row)
      sum += model->index(row, trainedPsnr).data(CompareTableModel::kSortRole).toDouble();
    QVERIFY(std::abs(model->index(4, trainedPsnr).data(CompareTableModel::kSortRole).toDouble() -
                     sum / 4) < 1e-6);
    // Bold marks the better tokenizer of each clip.
    const int untrainedPsnr = 2;
    for (int row = 0; row < 5; ++row) {
      const double a =
          model->index(row, untrainedPsnr).data(CompareTableModel::kSortRole).toDouble();
      const double b = model->index(row, trainedPsnr).data(CompareTableModel::kSortRole).toDouble();
      QCOMPARE(model->index(row, trainedPsnr).data(Qt::FontRole).value<QFont>().bold(), b >= a);
      QCOMPARE(model->index(row, untrainedPsnr).data(Qt::FontRole).value<QFont>().bold(), a >= b);
    }

    // Selecting a row shows that clip; choosing a clip selects its row.
    const int clipOfRow1 = model->index(1, 0).data(CompareTableModel::kSortRole).toInt();
    table->selectRow(1);
    QCOMPARE(review->currentClip(), clipOfRow1);
    table->selectRow(4);  // the mean row: no clip of its own, the review stays
    QCOMPARE(review->currentClip(), clipOfRow1);
    const int other = (clipOfRow1 + 1) % 4;
    review->setCurrentClip(other);
    QCOMPARE(
        model->index(table->currentIndex().row(), 0).data(CompareTableModel::kSortRole).toInt(),
        other);
  }

  void heatmapToggleChangesThePixels() {
    ComparePage page;
    QVERIFY(page.openCompareFolder(kCompareDemo));
    page.resize(1100, 760);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    CompareReview* review = page.review();
    QVERIFY(review->isHeatmapAvailable());
    auto* original = review->players()[0];
    auto* trained = review->players()[2];
    const QVector<QRgb> trainedBefore = framePixels(trained);
    const QVector<QRgb> originalBefore = framePixels(original);

    QSignalSpy toggled(review, &CompareReview::heatmapVisibleChanged);
    review->setHeatmapVisible(true);
    QCOMPARE(toggled.count(), 1);
    QVERIFY(review->isHeatmapVisible());
    QVERIFY(review->heatmapScaleMax() >= 4 && review->heatmapScaleMax() <= 255);
    QTRY_VERIFY(differingSamples(trainedBefore, framePixels(trained)) > 100);
    QTRY_COMPARE(differingSamples(originalBefore, framePixels(original)), 0);
    QVERIFY(trained->title().contains(QLatin1String("difference")));
    // The heatmap is |trained - original| on the shared scale.
    const QImage expected = tb::widgets::differenceImage(
        original->currentFrame(), review->report()->loadPanels(0)[2][original->shownFrameIndex()],
        review->heatmapScaleMax());
    QCOMPARE(trained->currentFrame(), expected);
    auto* scale = review->findChild<QWidget*>(QStringLiteral("heatmapScale"));
    QVERIFY(scale != nullptr && scale->isVisible());

    review->setHeatmapVisible(false);
    QCOMPARE(toggled.count(), 2);
    QTRY_COMPARE(differingSamples(trainedBefore, framePixels(trained)), 0);
    QVERIFY(!scale->isVisible());
  }

  void exportsTheGridAndTheFiles() {
    CompareReview review;
    review.setReport(CompareReport::load(kCompareDemo));
    QTemporaryDir out;
    const QString gridPath = out.filePath(QStringLiteral("grid_clip_000.png"));
    QString error;
    QVERIFY2(review.exportGrid(gridPath, &error), qPrintable(error));
    const QImage grid(gridPath);
    QVERIFY(!grid.isNull());
    // Three columns of 128-pixel cells (32 x 4), with names above and metrics under them.
    QVERIFY(grid.width() >= 3 * 128 && grid.height() > 128 + 40);
    const QImage plain = review.gridImage();
    review.setHeatmapVisible(true);
    const QImage withHeat = review.gridImage();
    QVERIFY(withHeat.height() > plain.height() + 100);  // a row of difference maps

    const QString exportDir = out.filePath(QStringLiteral("exported"));
    const int copied = review.exportFiles(exportDir, &error);
    QVERIFY2(copied > 0, qPrintable(error));
    QCOMPARE(copied, review.report()->outputFiles().size());
    for (const QString& relative : review.report()->outputFiles()) {
      const QFileInfo copy(QDir(exportDir).filePath(relative));
      QVERIFY2(copy.isFile(), qPrintable(relative));
      QCOMPARE(copy.size(), QFileInfo(QDir(kCompareDemo).filePath(relative)).size());
    }
    QCOMPARE(review.exportFiles(exportDir, &error), copied);  // again: replaces
    QCOMPARE(review.exportFiles(kCompareDemo, &error), -1);   // never onto itself
    QVERIFY(error.contains(QLatin1String("compare folder itself")));
  }

  void showsLpipsWhenTheFileHasIt() {
    QTemporaryDir dir;
    QVERIFY(copyTree(kCompareDemo, dir.path()));
    QFile file(dir.filePath(QStringLiteral("metrics.json")));
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    file.close();
    QJsonArray clips = root.value(QLatin1String("clips")).toArray();
    for (int c = 0; c < clips.size(); ++c) {
      QJsonObject clip = clips[c].toObject();
      QJsonObject metrics = clip.value(QLatin1String("metrics")).toObject();
      for (const QString& name : metrics.keys()) {
        QJsonObject m = metrics.value(name).toObject();
        m.insert(QStringLiteral("lpips"), 0.1 * (c + 1));
        metrics.insert(name, m);
      }
      clip.insert(QStringLiteral("metrics"), metrics);
      clips[c] = clip;
    }
    root.insert(QStringLiteral("clips"), clips);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(QJsonDocument(root).toJson());
    file.close();

    CompareReview review;
    review.setReport(CompareReport::load(dir.path()));
    QCOMPARE(review.tableModel()->columnCount(), 2 + 2 * 3);
    QCOMPARE(review.tableModel()->headerData(4, Qt::Horizontal).toString(),
             QStringLiteral("untrained\nLPIPS \u2193"));
    QCOMPARE(review.players()[1]->captionLines().size(), 3);
    QCOMPARE(review.players()[1]->captionLines().at(2), QStringLiteral("LPIPS 0.1000"));
  }

  // At 1024x640 the per-clip table shows every row (4 clips and the mean); the columns of two
  // tokenizers' PSNR and SSIM fit beside the form, and three tokenizers with LPIPS too at
  // 1280x800; every number is whole, each tokenizer named once over its columns. Without LPIPS
  // values nothing promises LPIPS, and a line says why it is missing.
  void tableReadsAt1024x640() {
    QTemporaryDir dir;
    QVERIFY(writeThreeTokenizerReport(dir.path(), true));
    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    window.resize(1024, 640);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.setCurrentPage(tb::app::PageId::Compare);
    ComparePage* page = window.comparePage();
    CompareReview* review = page->review();
    QTableView* table = review->tableView();
    const QFontMetrics metrics(table->font());
    // Every row and (with `allColumns`) every column in view, and no number cut.
    auto checkTable = [&](bool allColumns) {
      QAbstractItemModel* model = table->model();
      const QRect view = table->viewport()->rect();
      for (int row = 0; row < model->rowCount(); ++row) {
        const QRect cell = table->visualRect(model->index(row, 0));
        QVERIFY2(view.contains(cell), qPrintable(QStringLiteral("row %1 at y %2 of %3")
                                                     .arg(row)
                                                     .arg(cell.bottom())
                                                     .arg(view.height())));
      }
      for (int column = 0; column < model->columnCount(); ++column) {
        const QRect cell = table->visualRect(model->index(0, column));
        QVERIFY2(!allColumns || (cell.left() >= 0 && cell.right() <= view.right()),
                 qPrintable(QStringLiteral("column %1 at x %2..%3 of %4")
                                .arg(column)
                                .arg(cell.left())
                                .arg(cell.right())
                                .arg(view.width())));
        if (column < CompareTableModel::kFirstMetricColumn) continue;
        for (int row = 0; row < model->rowCount(); ++row) {
          const QString text = model->index(row, column).data().toString();
          QVERIFY2(metrics.horizontalAdvance(text) < table->columnWidth(column), qPrintable(text));
        }
      }
      QCOMPARE(table->horizontalScrollBar()->isVisible(), !allColumns);
    };

    // The demo (two tokenizers, no LPIPS): all of it in view, and the line that says why there
    // is no LPIPS.
    QVERIFY(page->openCompareFolder(kCompareDemo));
    QTest::qWait(50);
    QCOMPARE(window.size(), QSize(1024, 640));
    QCOMPARE(table->model()->rowCount(), 5);
    QCOMPARE(table->model()->columnCount(), 2 + 2 * 2);
    checkTable(true);
    for (int column = 0; column < table->model()->columnCount(); ++column) {
      QVERIFY(!table->model()->headerData(column, Qt::Horizontal).toString().contains("LPIPS"));
    }
    QVERIFY(review->lpipsNote()->isVisible());
    QVERIFY(review->lpipsNote()->text().contains(QLatin1String("without LPIPS weight files")));
    QVERIFY(review->lpipsNote()->toolTip().contains(QLatin1String("docs/evaluation.md")));
    for (const QLabel* label : page->findChildren<QLabel*>()) {
      QVERIFY2(!label->isVisible() || !label->text().contains(QLatin1String("SSIM and LPIPS")),
               qPrintable(label->text()));
    }
    QVERIFY(window.grab().save(kShotsDir + QStringLiteral("/compare-1024x640.png")));

    // Three tokenizers with LPIPS: every row still, the columns scroll sideways, readable.
    QVERIFY(page->openCompareFolder(dir.path()));
    QTest::qWait(50);
    QCOMPARE(table->model()->columnCount(), 2 + 3 * 3);
    checkTable(false);
    auto* header = qobject_cast<tb::app::CompareHeaderView*>(table->horizontalHeader());
    QVERIFY(header != nullptr);
    QCOMPARE(header->groupOf(2), QStringLiteral("classic-vq"));
    QCOMPARE(header->groupOf(10), QStringLiteral("magvit2-ucf101"));
    QCOMPARE(table->model()
                 ->headerData(4, Qt::Horizontal, CompareTableModel::kHeaderLabelRole)
                 .toString(),
             QStringLiteral("LPIPS \u2193"));
    QVERIFY(!review->lpipsNote()->isVisible());
    table->sortByColumn(3, Qt::DescendingOrder);
    QTest::qWait(30);
    QVERIFY(window.grab().save(kShotsDir + QStringLiteral("/compare-1024x640-3-tokenizers.png")));
    window.resize(1280, 800);
    QTest::qWait(50);
    checkTable(true);
    QVERIFY(window.grab().save(kShotsDir + QStringLiteral("/compare-1280x800-3-tokenizers.png")));
  }

  void requestsTheTrainerCommand() {
    tb::app::CompareRequest request;
    request.trainer = QStringLiteral("/opt/tb/tokenbench-trainer");
    request.command.entries = {{"vqgan", "/runs/vq"}, {"magvit2", "/runs/my run"}};
    request.command.out_dir = "/tmp/cmp";
    request.command.clips = 6;
    QCOMPARE(tb::app::compareArguments(request),
             (QStringList{"compare", "--checkpoint", "vqgan=/runs/vq", "--checkpoint",
                          "magvit2=/runs/my run", "--out", "/tmp/cmp", "--clips", "6"}));
    request.command.data_dir = "/data/clips";
    request.command.lpips_backbone = "/w/alex.pth";
    request.command.lpips_lin = "/w/lin.pth";
    const QStringList args = tb::app::compareArguments(request);
    QVERIFY(args.join(' ').contains(QLatin1String("--data /data/clips --data-type videos")));
    QVERIFY(args.join(' ').contains(
        QLatin1String("--lpips-net alex --lpips-backbone /w/alex.pth --lpips-lin /w/lin.pth")));
    QVERIFY(tb::app::compareCommandLine(request).contains(QLatin1String("'magvit2=/runs/my run'")));

    QCOMPARE(tb::app::compareEntryName(QStringLiteral("/runs/demo-2024 01/"), {}),
             QStringLiteral("demo-2024_01"));
    QCOMPARE(tb::app::compareEntryName(QStringLiteral("/runs/a"), {QStringLiteral("a")}),
             QStringLiteral("a-2"));
    QCOMPARE(tb::app::compareEntryName(QStringLiteral("/x/original"), {}),
             QStringLiteral("tokenizer-original"));
  }

  // The output folder goes beside the outermost run holding the first tokenizer; where that run
  // ends is read off the window's thread (it looks at every folder above the path).
  void outputGoesBesideTheRunHoldingACheckpoint() {
    QTemporaryDir runs;
    const QString run = runs.filePath(QStringLiteral("demo"));
    const QString checkpoint = run + QStringLiteral("/checkpoints/step_5");
    QVERIFY(QDir().mkpath(checkpoint));
    for (const QString& file :
         {run + QStringLiteral("/config.json"), checkpoint + QStringLiteral("/config.json"),
          checkpoint + QStringLiteral("/model.safetensors")}) {
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write("{}\n") == 3);
    }
    tb::app::CompareSetupForm form;
    form.addEntry(checkpoint);
    QVERIFY(form.waitForReads());
    QVERIFY2(
        form.effectiveOutputDirectory().startsWith(runs.filePath(QStringLiteral("comparisons/"))),
        qPrintable(form.effectiveOutputDirectory()));
  }

  void formListsOpenRunsAndValidates() {
    QTemporaryDir runs;
    const QString a = runs.filePath(QStringLiteral("vqgan-run"));
    const QString b = runs.filePath(QStringLiteral("magvit2-run"));
    for (const QString& run : {a, b}) {  // run directories: each with its config.json
      QFile config(QDir(run).filePath(QStringLiteral("config.json")));
      QVERIFY(QDir().mkpath(run) && config.open(QIODevice::WriteOnly) && config.write("{}\n") == 3);
    }
    tb::app::MainWindow window;
    QVERIFY(window.openRunDirectory(a));
    tb::app::CompareSetupForm* form = window.comparePage()->setupForm();
    form->addEntry(b);  // the user's
    QCOMPARE(form->entries().size(), 2);
    QCOMPARE(form->entries()[0].name, QStringLiteral("vqgan-run"));
    QCOMPARE(form->entries()[1].path, b);
    QCOMPARE(window.comparePage()->emptyHeadline(),
             QStringLiteral("No comparison of vqgan-run yet"));
    // Beside the runs, never inside one.
    QVERIFY2(
        form->effectiveOutputDirectory().startsWith(runs.filePath(QStringLiteral("comparisons/"))),
        qPrintable(form->effectiveOutputDirectory()));
    QVERIFY(form->commandLine().contains(QStringLiteral("--checkpoint vqgan-run=") + a));

    QString problem;
    QVERIFY(!form->request(&problem));  // no trainer yet
    QVERIFY2(problem.contains(QLatin1String("not found")), qPrintable(problem));
    tb::app::TrainerLocation trainer;
    trainer.path = QStringLiteral("/opt/tb/tokenbench-trainer");
    window.setTrainerLocation(trainer);
    QVERIFY2(form->request(&problem).has_value(), qPrintable(problem));
    QCOMPARE(form->request()->trainer, trainer.path);

    form->addEntry(b, QStringLiteral("original"));  // a name the trainer refuses
    QVERIFY(!form->request(&problem));
    QVERIFY2(problem.contains(QLatin1String("\"original\"")), qPrintable(problem));
  }

  // Opening a run shows its newest comparison: compare/ itself or a folder inside it, read off
  // the window's thread.
  void opensTheNewestComparisonOfARun() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(QDir().mkpath(run));
    tb::app::ComparePage empty;
    empty.setOpenRun(run);  // nothing there
    QVERIFY(empty.waitForReads());
    QVERIFY(!empty.isShowingReview());

    const QString older = run + QStringLiteral("/compare/20261201-120000");
    const QString newer = run + QStringLiteral("/compare/20261202-120000");
    QVERIFY(copyTree(kCompareDemo, older) && copyTree(kCompareDemo, newer));
    QFile metrics(newer + QStringLiteral("/metrics.json"));
    QVERIFY(metrics.open(QIODevice::ReadWrite));
    QVERIFY(metrics.setFileTime(QDateTime::currentDateTime().addSecs(60),
                                QFileDevice::FileModificationTime));
    metrics.close();

    tb::app::ComparePage page;
    QSignalSpy opened(&page, &tb::app::ComparePage::compareFolderOpened);
    page.setOpenRun(run);
    QVERIFY(!page.isShowingReview());  // the call returns before the read
    QVERIFY(page.waitForReads());
    QVERIFY(page.isShowingReview());
    QCOMPARE(opened.size(), 1);
    QCOMPARE(QFileInfo(opened.front().front().toString()).fileName(),
             QStringLiteral("20261202-120000"));
    // The same run again changes nothing.
    page.setOpenRun(run);
    QVERIFY(page.waitForReads());
    QCOMPARE(opened.size(), 1);
    QVERIFY(page.isShowingReview());

    // A read that lands after the user opened a comparison leaves theirs.
    tb::app::ComparePage late;
    QSignalSpy lateOpened(&late, &tb::app::ComparePage::compareFolderOpened);
    late.setOpenRun(run);
    QVERIFY(late.openCompareFolder(older));
    QVERIFY(late.waitForReads());
    QCOMPARE(lateOpened.size(), 1);
    QCOMPARE(late.review()->report()->directory(), older);
  }

  // The page follows the open run: its comparison or its empty state, the run first among the
  // tokenizers (with its classic VQ reference), what the user added kept, the output beside it,
  // names' suffixes recomputed, and the order the user gives with the buttons and the keyboard.
  void followsTheOpenRun() {
    QTemporaryDir dir;
    const QString a = dir.filePath(QStringLiteral("runs/alpha"));
    const QString b = dir.filePath(QStringLiteral("other-runs/beta"));
    const QString twin = dir.filePath(QStringLiteral("more/beta"));  // same folder name as b
    for (const QString& run : {a, b, twin}) {
      QVERIFY(QDir().mkpath(run + QStringLiteral("/reference")));
      for (const char* name :
           {"config.json", "reference/config.json", "reference/codec.safetensors"}) {
        QFile file(QDir(run).filePath(QString::fromLatin1(name)));
        QVERIFY(file.open(QIODevice::WriteOnly) && file.write("{}\n") == 3);
      }
    }
    QVERIFY(copyTree(kCompareDemo, a + QStringLiteral("/compare")));
    const QString extra = dir.filePath(QStringLiteral("checkpoints/base"));
    QVERIFY(QDir().mkpath(extra));

    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    window.resize(1024, 640);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    ComparePage* page = window.comparePage();
    tb::app::CompareSetupForm* form = page->setupForm();
    auto names = [form] {
      QStringList out;
      for (const tb::app::CompareEntry& e : form->entries()) out << e.name;
      return out;
    };

    QVERIFY(window.openRunDirectory(a));
    QVERIFY(page->waitForReads() && form->waitForReads());
    QVERIFY(page->isShowingReview());
    QCOMPARE(page->review()->report()->directory(), a + QStringLiteral("/compare"));
    QCOMPARE(names(), (QStringList{"alpha", "classic-vq"}));
    form->addEntry(extra);  // the user's own

    // Another run: its empty state, not alpha's comparison; alpha's rows go, the user's stay.
    QVERIFY(window.openRunDirectory(b));
    QVERIFY(!page->isShowingReview());
    QCOMPARE(page->emptyHeadline(), QStringLiteral("No comparison of beta yet"));
    QVERIFY(page->waitForReads() && form->waitForReads());
    QVERIFY(!page->isShowingReview());
    QCOMPARE(names(), (QStringList{"beta", "classic-vq", "base"}));
    QCOMPARE(form->entries()[1].path, b + QStringLiteral("/reference"));
    QVERIFY2(form->effectiveOutputDirectory().startsWith(
                 dir.filePath(QStringLiteral("other-runs/comparisons/"))),
             qPrintable(form->effectiveOutputDirectory()));

    // A second "beta" gets a suffix while the first is listed, and loses it when it goes.
    form->addEntry(twin);
    QCOMPARE(names(), (QStringList{"beta", "classic-vq", "base", "beta-2"}));
    auto* table = form->findChild<QTableWidget*>(QStringLiteral("compareEntries"));
    auto* remove = form->findChild<QPushButton*>(QStringLiteral("removeCompareEntry"));
    table->selectRow(0);
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(names(), (QStringList{"classic-vq", "base", "beta"}));
    QCOMPARE(form->entries()[2].path, twin);
    // Without the open run listed, the output goes beside the first tokenizer.
    QVERIFY(form->waitForReads());  // where the runs around it end is read off this thread
    QVERIFY2(form->effectiveOutputDirectory().startsWith(
                 dir.filePath(QStringLiteral("other-runs/comparisons/"))),
             qPrintable(form->effectiveOutputDirectory()));

    // Reorder: the button, then Alt+Up on the table; the command follows the list.
    auto* up = form->findChild<QToolButton*>(QStringLiteral("moveCompareEntryUp"));
    auto* down = form->findChild<QToolButton*>(QStringLiteral("moveCompareEntryDown"));
    table->setCurrentCell(2, 1);
    table->selectRow(2);
    QTest::mouseClick(up, Qt::LeftButton);
    QCOMPARE(names(), (QStringList{"classic-vq", "beta", "base"}));
    table->setFocus();
    QTest::keyClick(table, Qt::Key_Up, Qt::AltModifier);
    QCOMPARE(names(), (QStringList{"beta", "classic-vq", "base"}));
    QVERIFY(!up->isEnabled());  // at the top
    QTest::keyClick(table, Qt::Key_Down, Qt::AltModifier);
    QCOMPARE(names(), (QStringList{"classic-vq", "beta", "base"}));
    QVERIFY(up->isEnabled() && down->isEnabled());
    const QString command = form->commandLine();
    QVERIFY2(
        command.indexOf(QStringLiteral("classic-vq=")) < command.indexOf(QStringLiteral("beta=")) &&
            command.indexOf(QStringLiteral("beta=")) < command.indexOf(QStringLiteral("base=")),
        qPrintable(command));

    // Back to alpha: its comparison again, and beta's reference gives way to alpha's.
    QVERIFY(window.openRunDirectory(a));
    QVERIFY(page->waitForReads() && form->waitForReads());
    QVERIFY(page->isShowingReview());
    QCOMPARE(page->review()->report()->directory(), a + QStringLiteral("/compare"));
    QCOMPARE(names(), (QStringList{"alpha", "classic-vq", "beta", "base"}));
    QCOMPARE(form->entries()[1].path, a + QStringLiteral("/reference"));
    QVERIFY2(form->effectiveOutputDirectory().startsWith(
                 dir.filePath(QStringLiteral("runs/comparisons/"))),
             qPrintable(form->effectiveOutputDirectory()));
  }

  void formTakesDataAndLpipsFromTheRunConfig() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    const QString videos = dir.filePath(QStringLiteral("videos"));
    QVERIFY(QDir().mkpath(run) && QDir().mkpath(videos));
    for (const char* weights : {"alex_backbone.pth", "alex_lin.pth"}) {
      QFile file(dir.filePath(QString::fromLatin1(weights)));
      QVERIFY(file.open(QIODevice::WriteOnly));
    }
    QJsonObject config{
        {QStringLiteral("data"), QJsonObject{{QStringLiteral("type"), QStringLiteral("videos")},
                                             {QStringLiteral("path"), videos}}},
        {QStringLiteral("loss"),
         QJsonObject{
             {QStringLiteral("perceptual_net"), QStringLiteral("vgg")},
             {QStringLiteral("lpips_backbone"), dir.filePath(QStringLiteral("alex_backbone.pth"))},
             {QStringLiteral("lpips_lin"), dir.filePath(QStringLiteral("alex_lin.pth"))}}}};
    QFile file(QDir(run).filePath(QStringLiteral("config.json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QJsonDocument(config).toJson());
    file.close();

    tb::app::CompareSetupForm form;
    form.setTrainerPath(QStringLiteral("/opt/tb/tokenbench-trainer"));
    form.setOpenRun(run);
    QVERIFY(form.waitForReads());  // config.json is read off this thread
    QString problem;
    const std::optional<tb::app::CompareRequest> request = form.request(&problem);
    QVERIFY2(request.has_value(), qPrintable(problem));
    QCOMPARE(tb::app::pathText(request->command.data_dir), videos);
    QCOMPARE(request->command.data_type, std::string("videos"));
    QCOMPARE(request->command.lpips_net, std::string("vgg"));
    QCOMPARE(tb::app::pathText(request->command.lpips_backbone),
             dir.filePath(QStringLiteral("alex_backbone.pth")));
    QVERIFY(form.commandLine().contains(QLatin1String("--lpips-net vgg --lpips-backbone")));
  }

  // A run whose config.json is a FIFO nobody writes (a hung network file system, to a reader):
  // listing it in the form leaves the event loop serving a 10 ms timer within 100 ms, and the
  // fields it would fill stay empty.
  void stalledRunConfigLeavesTheFormResponsive() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(QDir().mkpath(run));
    const QString config = QDir(run).filePath(QStringLiteral("config.json"));
    QVERIFY(tb::test::makeStalledFile(config));
    tb::app::CompareSetupForm form;
    form.setOpenRun(run);
    const qint64 latency = tb::test::timerLatencyMs();
    QVERIFY2(latency >= 0 && latency < 100, qPrintable(QString::number(latency)));
    QVERIFY(tb::test::releaseStalledFiles({config}, [&] { return form.waitForReads(20); }));
    QCOMPARE(form.entries().size(), 1);
    const std::optional<tb::app::CompareRequest> request = form.request();
    QVERIFY(!request || request->command.data_dir.empty());
  }

  // A run with a classic VQ reference (train.reference_codec) brings it along as a tokenizer.
  void formAddsTheRunsClassicVqReference() {
    QTemporaryDir dir;
    const QString run = dir.filePath(QStringLiteral("run"));
    QVERIFY(QDir().mkpath(run + QStringLiteral("/reference")));
    for (const char* name :
         {"config.json", "reference/config.json", "reference/codec.safetensors"}) {
      QFile file(QDir(run).filePath(QString::fromLatin1(name)));
      QVERIFY(file.open(QIODevice::WriteOnly) && file.write("{}\n") == 3);
    }
    tb::app::CompareSetupForm form;
    form.setOpenRun(run);
    QVERIFY(form.waitForReads());  // whether the run has a reference is read off this thread
    QCOMPARE(form.entries().size(), 2);
    QCOMPARE(form.entries()[1].name, QStringLiteral("classic-vq"));
    QCOMPARE(form.entries()[1].path, run + QStringLiteral("/reference"));
    form.setOpenRun(run);  // the same run again adds nothing
    QVERIFY(form.waitForReads());
    QCOMPARE(form.entries().size(), 2);
    QVERIFY(form.commandLine().contains(QStringLiteral("--checkpoint classic-vq=") + run));
  }

  void reportsTheTrainersError() {
    QTemporaryDir dir;
    const QString script = writeScript(
        dir.path(),
        QStringLiteral("echo 'compare: loading' >&2\n"
                       "echo 'tokenbench-trainer compare: /runs/x: no checkpoint in this run "
                       "directory' >&2\nexit 2"));
    ComparePage page;
    page.setTrainerPath(script);
    page.setupForm()->addEntry(dir.filePath(QStringLiteral("x")));
    page.setupForm()->setOutputDirectory(dir.filePath(QStringLiteral("out")));
    QSignalSpy finished(&page, &ComparePage::compareFinished);
    QVERIFY(page.startCompare());
    QCOMPARE(page.emptyHeadline(), QStringLiteral("Comparing\u2026"));
    QVERIFY(finished.wait(10000));
    QCOMPARE(finished.takeFirst().at(0).toBool(), false);
    const QString status = page.setupForm()->statusText();
    QVERIFY2(status.contains(QLatin1String("exited with status 2")), qPrintable(status));
    QVERIFY2(status.contains(QLatin1String("no checkpoint in this run directory")),
             qPrintable(status));
    QCOMPARE(page.emptyHeadline(), QStringLiteral("The comparison failed"));
    QVERIFY(!page.isShowingReview());

    // Exit 0 without metrics.json is a failure too; a missing program cannot start.
    page.setTrainerPath(writeScript(dir.path(), QStringLiteral("exit 0")));
    QVERIFY(page.startCompare());
    QVERIFY(finished.wait(10000));
    QVERIFY2(page.setupForm()->statusText().contains(QLatin1String("wrote no metrics.json")),
             qPrintable(page.setupForm()->statusText()));
    page.setTrainerPath(dir.filePath(QStringLiteral("no-such-trainer")));
    QVERIFY(page.startCompare());
    QVERIFY(finished.wait(10000));
    QVERIFY2(page.setupForm()->statusText().contains(QLatin1String("Could not start")),
             qPrintable(page.setupForm()->statusText()));

    // Cancel ends a hanging trainer.
    page.setTrainerPath(writeScript(dir.path(), QStringLiteral("echo started >&2\nexec sleep 60")));
    QVERIFY(page.startCompare());
    QTRY_VERIFY(page.process()->stderrTail().contains(QStringLiteral("started")));
    page.process()->cancel();
    QVERIFY(finished.wait(10000));
    QCOMPARE(page.setupForm()->statusText(), QStringLiteral("Comparison cancelled."));
  }

  void comparesWithTheRealTrainer() {
    const QString trainer = qEnvironmentVariable("TB_TEST_TRAINER");
    if (trainer.isEmpty()) QSKIP("TB_TEST_TRAINER is not set (the slow test sets it)");
    QTemporaryDir dir;
    // Two checkpoint folders (the same seed: the same weights), listed as tokenizers.
    QStringList folders;
    for (const char* name : {"demo-a", "demo-b"}) {
      folders << dir.filePath(QString::fromLatin1(name));
      QProcess init;
      init.start(trainer, {QStringLiteral("init"), QStringLiteral("--preset"),
                           QStringLiteral("demo"), QStringLiteral("--out"), folders.back()});
      QVERIFY(init.waitForFinished(120000));
      QCOMPARE(init.exitCode(), 0);
    }
    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation location;
    location.path = trainer;
    window.setTrainerLocation(location);
    window.setCurrentPage(tb::app::PageId::Compare);
    ComparePage* page = window.comparePage();
    // Checkpoint folders are compared, not opened as runs.
    for (const QString& folder : folders) {
      QVERIFY(!window.openRunDirectory(folder));
      page->setupForm()->addEntry(folder);
    }
    page->setupForm()->setClipCount(2);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    // One click on Compare.
    QSignalSpy finished(page, &ComparePage::compareFinished);
    auto* compare = page->findChild<QPushButton*>(QStringLiteral("runCompare"));
    QVERIFY(compare != nullptr);
    QTest::mouseClick(compare, Qt::LeftButton);
    QVERIFY(page->process()->isRunning() || finished.count() == 1);
    QVERIFY(finished.count() == 1 || finished.wait(300000));
    QVERIFY2(finished.takeFirst().at(0).toBool(), qPrintable(page->setupForm()->statusText()));
    QVERIFY(page->isShowingReview());
    const auto& report = page->review()->report();
    QVERIFY(report->directory().startsWith(dir.filePath(QStringLiteral("comparisons/"))));
    QCOMPARE(report->clipCount(), 2);
    QCOMPARE(report->tokenizerCount(), 2);
    QCOMPARE(report->tokenizerName(1), QStringLiteral("demo-b"));
    QVERIFY(page->review()->panelsAreLossless());
    // The same weights twice: identical reconstructions and metrics.
    QCOMPARE(report->clips()[0].scores[0].psnr, report->clips()[0].scores[1].psnr);
    QCOMPARE(page->review()->players()[1]->frames(), page->review()->players()[2]->frames());
    QVERIFY(
        !page->setupForm()->findChild<QWidget*>(QStringLiteral("compareDataType"))->isEnabled());
    // Laid out, the panels share the width.
    QTRY_VERIFY(page->review()->players()[2]->frameRectInPlayer().width() > 150);
    QVERIFY(QDir().mkpath(kShotsDir));
    QVERIFY(window.grab().save(kShotsDir + QStringLiteral("/compare_page_after_run.png")));
  }

  void screenshotWithRealData() {
    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    window.setCurrentPage(tb::app::PageId::Compare);
    QVERIFY(window.comparePage()->openCompareFolder(kCompareDemo));
    window.comparePage()->review()->timeline()->setFrameIndex(2);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::qWait(50);
    QVERIFY(QDir().mkpath(kShotsDir));
    const QImage shot = window.grab().toImage();
    QVERIFY(shot.save(kShotsDir + QStringLiteral("/compare_page.png")));
    window.comparePage()->review()->setHeatmapVisible(true);
    QTest::qWait(20);
    const QImage heat = window.grab().toImage();
    QVERIFY(heat.save(kShotsDir + QStringLiteral("/compare_page_heatmap.png")));
    QVERIFY(differingPixels(shot, heat) > 100);
    QString error;
    QVERIFY2(window.comparePage()->review()->exportGrid(
                 kShotsDir + QStringLiteral("/compare_grid.png"), &error),
             qPrintable(error));
  }
};

QTEST_MAIN(ComparePageTest)
#include "test_compare_page.moc"
