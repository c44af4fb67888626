// The Samples page over a run directory holding real sample GIFs (written by the trainer, in
// tests/app/data): one step slider for every panel, the GIF cut into original and
// reconstruction players, live polling of the samples folder.
#include "app/gui/main_window.h"
#include "app/gui/pages/samples_page.h"
#include "widgets/clip_player.h"
#include "widgets/clip_timeline.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>

using tb::app::SamplesPage;

namespace {

const QString kDataDir = QStringLiteral(TB_APP_TEST_DATA_DIR);
const QString kShotsDir = QStringLiteral(TB_APP_SCREENSHOT_DIR);

bool addSample(const QString& run, const QString& fixture, const QString& name) {
  const QString samples = QDir(run).filePath(QStringLiteral("samples"));
  return QDir().mkpath(samples) &&
         QFile::copy(kDataDir + QLatin1Char('/') + fixture, QDir(samples).filePath(name));
}

int differingPixels(const QImage& a, const QImage& b) {
  if (a.size() != b.size()) return -1;
  int differing = 0;
  for (int y = 0; y < a.height(); ++y) {
    for (int x = 0; x < a.width(); ++x) differing += a.pixel(x, y) != b.pixel(x, y);
  }
  return differing;
}

}  // namespace

class SamplesPageTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void listsOnlyStepFiles() {
    QTemporaryDir run;
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_a.gif"), QStringLiteral("step_10.gif")));
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_b.gif"), QStringLiteral("step_200.gif")));
    for (const char* odd : {"step_30.gif.tmp", ".step_40.gif", "step_050.gif", "step_x.gif",
                            "step_60.png", "notes.txt"}) {
      QVERIFY(addSample(run.path(), QStringLiteral("sample_step_a.gif"), QString::fromLatin1(odd)));
    }
    const QMap<qint64, QString> files =
        SamplesPage::listSampleFiles(QDir(run.path()).filePath(QStringLiteral("samples")));
    QCOMPARE(files.keys(), (QList<qint64>{10, 200}));
    QVERIFY(files.value(200).endsWith(QLatin1String("/samples/step_200.gif")));

    QCOMPARE(SamplesPage::clipRowsIn({64, 128}), 4);
    QCOMPARE(SamplesPage::clipRowsIn({64, 32}), 1);
    QCOMPARE(SamplesPage::clipRowsIn({128, 64}), 1);
    QCOMPARE(SamplesPage::clipRowsIn({65, 100}), 1);
  }

  void emptyStatesSayWhy() {
    SamplesPage page;
    QCOMPARE(page.emptyHeadline(), QStringLiteral("No run open"));
    QVERIFY(!page.isShowingSamples());
    QTemporaryDir run;
    page.setRunDirectory(run.path());
    QVERIFY(page.emptyHeadline().startsWith(QLatin1String("No samples yet in ")));
    QVERIFY(!page.isShowingSamples());
    QVERIFY(page.players().isEmpty());
  }

  void oneStepSliderDrivesEveryPanel() {
    QTemporaryDir run;
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_a.gif"), QStringLiteral("step_10.gif")));
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_b.gif"), QStringLiteral("step_20.gif")));
    SamplesPage page;
    page.resize(1000, 760);
    page.setRunDirectory(run.path());
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QVERIFY(page.isShowingSamples());
    QCOMPARE(page.steps(), (QList<qint64>{10, 20}));
    QSlider* slider = page.stepSlider();
    QCOMPARE(slider->minimum(), 0);
    QCOMPARE(slider->maximum(), 1);
    QCOMPARE(page.currentStep(), qint64(20));  // the newest first
    QCOMPARE(slider->value(), 1);

    // 4 validation clips: 4 rows of original | reconstruction, 32x32, 5 frames, one timeline.
    const QList<tb::widgets::ClipPlayer*> players = page.players();
    QCOMPARE(players.size(), 8);
    QCOMPARE(page.timeline()->players().size(), 8);
    QCOMPARE(page.timeline()->frameCount(), 5);
    for (auto* player : players) QCOMPARE(player->frameSize(), QSize(32, 32));
    const QImage gif = QImage(kDataDir + QStringLiteral("/sample_step_b.gif"))
                           .convertToFormat(QImage::Format_RGB32);
    QCOMPARE(players[2]->frames()[0], gif.copy(0, 32, 32, 32));   // clip 2, original
    QCOMPARE(players[3]->frames()[0], gif.copy(32, 32, 32, 32));  // clip 2, reconstruction

    page.timeline()->setFrameIndex(3);
    for (auto* player : players) QCOMPARE(player->shownFrameIndex(), 3);

    // Moving the slider shows the other step in every panel.
    QSignalSpy stepChanged(&page, &SamplesPage::currentStepChanged);
    const QImage before = players[1]->grab().toImage();
    slider->setValue(0);
    QCOMPARE(stepChanged.count(), 1);
    QCOMPARE(page.currentStep(), qint64(10));
    QTRY_VERIFY(differingPixels(before, players[1]->grab().toImage()) > 50);
    const QImage older = QImage(kDataDir + QStringLiteral("/sample_step_a.gif"))
                             .convertToFormat(QImage::Format_RGB32);
    QCOMPARE(players[1]->frames()[0], older.copy(32, 0, 32, 32));
    QCOMPARE(players[1]->shownFrameIndex(), 3);  // the frame position is kept

    page.setZoom(tb::widgets::ClipPlayer::Zoom::X2);
    for (auto* player : page.players()) QCOMPARE(player->zoom(), tb::widgets::ClipPlayer::Zoom::X2);

    QVERIFY(QDir().mkpath(kShotsDir));
    page.setZoom(tb::widgets::ClipPlayer::Zoom::Fit);
    QTest::qWait(20);
    QVERIFY(page.grab().save(kShotsDir + QStringLiteral("/samples_page_widget.png")));
  }

  void followsNewSamplesOfALiveRun() {
    QTemporaryDir run;
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_a.gif"), QStringLiteral("step_10.gif")));
    SamplesPage page;
    page.setRunDirectory(run.path());
    QCOMPARE(page.steps().size(), 1);
    QSignalSpy steps(&page, &SamplesPage::stepsChanged);

    // The trainer writes a temporary name, then renames: only the final name counts.
    QVERIFY(addSample(run.path(), QStringLiteral("sample_step_b.gif"),
                      QStringLiteral("step_20.gif.tmp")));
    page.rescan();
    QCOMPARE(steps.count(), 0);
    QVERIFY(QFile::rename(QDir(run.path()).filePath(QStringLiteral("samples/step_20.gif.tmp")),
                          QDir(run.path()).filePath(QStringLiteral("samples/step_20.gif"))));
    // The poll timer finds it within about a second and, following, shows it.
    QTRY_COMPARE_WITH_TIMEOUT(page.steps().size(), 2, 5000);
    QCOMPARE(page.currentStep(), qint64(20));
    QCOMPARE(page.stepSlider()->maximum(), 1);

    // Not following: a new step is listed but the shown one stays.
    page.setFollowNewSamples(false);
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_a.gif"), QStringLiteral("step_30.gif")));
    page.rescan();
    QCOMPARE(page.steps().size(), 3);
    QCOMPARE(page.currentStep(), qint64(20));
    QCOMPARE(page.stepSlider()->value(), 1);
    QCOMPARE(page.stepSlider()->maximum(), 2);

    // A broken sample says so instead of showing stale frames.
    QFile broken(QDir(run.path()).filePath(QStringLiteral("samples/step_40.gif")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("GIF89a truncated");
    broken.close();
    page.rescan();
    page.setCurrentStep(40);
    QCOMPARE(page.currentStep(), qint64(40));
    QVERIFY(!page.loadError().isEmpty());
    QVERIFY(page.players().isEmpty());
  }

  void screenshotInTheWindow() {
    QTemporaryDir run;
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_a.gif"), QStringLiteral("step_100.gif")));
    QVERIFY(
        addSample(run.path(), QStringLiteral("sample_step_b.gif"), QStringLiteral("step_200.gif")));
    QFile config(run.filePath(QStringLiteral("config.json")));  // what makes it a run
    QVERIFY(config.open(QIODevice::WriteOnly) && config.write("{}\n") == 3);
    config.close();
    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    QVERIFY(window.openRunDirectory(run.path()));
    window.setCurrentPage(tb::app::PageId::Samples);
    window.samplesPage()->timeline()->setFrameIndex(2);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::qWait(50);
    QVERIFY(window.samplesPage()->isShowingSamples());
    // The cells fill the page's height: four rows of square panels well past the 48-pixel floor.
    QTRY_VERIFY(window.samplesPage()->players().front()->width() > 100);
    QCOMPARE(window.samplesPage()->players().front()->width(),
             window.samplesPage()->players().front()->height());
    QVERIFY(QDir().mkpath(kShotsDir));
    QVERIFY(window.grab().save(kShotsDir + QStringLiteral("/samples_page.png")));
  }
};

QTEST_MAIN(SamplesPageTest)
#include "test_samples_page.moc"
