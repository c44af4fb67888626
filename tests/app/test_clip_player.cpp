// ClipPlayer, ClipTimeline, frame reading and difference maps: data in, then what is drawn
// (grabbed pixels) and which signals fire.
#include "widgets/clip_frames.h"
#include "widgets/clip_player.h"
#include "widgets/clip_timeline.h"
#include "widgets/color_scale_bar.h"
#include "widgets/difference_map.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QVBoxLayout>

#include <memory>

using tb::widgets::ClipFrames;
using tb::widgets::ClipPlayer;
using tb::widgets::ClipTimeline;

namespace {

const QString kDataDir = QStringLiteral(TB_APP_TEST_DATA_DIR);

QImage solid(QSize size, QRgb color) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(color);
  return image;
}

ClipFrames solidFrames(QSize size, const QVector<QRgb>& colors) {
  ClipFrames frames;
  for (QRgb c : colors) frames.append(solid(size, c));
  return frames;
}

// The colour drawn at the centre of the player's frame, read from a grab of the player.
QRgb shownCentre(ClipPlayer& player) {
  const QImage grab = player.grab().toImage();
  const QRect r = player.frameRectInPlayer();
  const qreal dpr = grab.devicePixelRatio();
  return grab.pixel(int(r.center().x() * dpr), int(r.center().y() * dpr)) & 0xffffff;
}

}  // namespace

class ClipPlayerTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void splitsFrameStrips() {
    QImage strip(12, 4, QImage::Format_RGB32);
    const QVector<QRgb> colors{0xff0000, 0x00ff00, 0x0000ff};
    for (int t = 0; t < 3; ++t) {
      for (int y = 0; y < 4; ++y) {
        for (int x = 0; x < 4; ++x) strip.setPixel(4 * t + x, y, colors[t]);
      }
    }
    const ClipFrames frames = tb::widgets::splitFrameStrip(strip, 3);
    QCOMPARE(frames.size(), 3);
    for (int t = 0; t < 3; ++t) {
      QCOMPARE(frames[t].size(), QSize(4, 4));
      QCOMPARE(frames[t].pixel(2, 2) & 0xffffff, colors[t]);
    }
    QCOMPARE(tb::widgets::splitFrameStrip(strip, 0).size(), 3);  // square frames
    QVERIFY(tb::widgets::splitFrameStrip(strip, 5).isEmpty());   // 12 is not 5 frames

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("strip.png"));
    QVERIFY(strip.save(path));
    QString error;
    QCOMPARE(tb::widgets::readFrameStrip(path, 3, &error).size(), 3);
    QVERIFY(tb::widgets::readFrameStrip(path, 5, &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("not a strip of 5 frames")), qPrintable(error));
    QVERIFY(tb::widgets::readAnimation(dir.filePath(QStringLiteral("none.gif")), &error).isEmpty());
    QVERIFY2(error.contains(QLatin1String("no such file")), qPrintable(error));
  }

  void readsTheTrainersGif() {
    // samples/step_N.gif as the trainer wrote it: 4 validation clips of 32x32, 5 frames,
    // original | reconstruction.
    QString error;
    const ClipFrames frames =
        tb::widgets::readAnimation(kDataDir + QStringLiteral("/sample_step_a.gif"), &error);
    QVERIFY2(!frames.isEmpty(), qPrintable(error));
    QCOMPARE(frames.size(), 5);
    QCOMPARE(frames.front().size(), QSize(64, 128));
    QVERIFY(frames[0] != frames[4]);  // the clip moves
    const ClipFrames left = tb::widgets::cropFrames(frames, QRect(0, 32, 32, 32));
    QCOMPARE(left.size(), 5);
    QCOMPARE(left[2], frames[2].copy(0, 32, 32, 32));

    ClipPlayer player;
    QSignalSpy changed(&player, &ClipPlayer::framesChanged);
    QVERIFY(player.loadAnimation(kDataDir + QStringLiteral("/sample_step_a.gif")));
    QCOMPARE(player.frameCount(), 5);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.takeFirst().at(0).toInt(), 5);
    QVERIFY(!player.loadAnimation(kDataDir + QStringLiteral("/missing.gif")));
    QCOMPARE(player.frameCount(), 0);
    QVERIFY(player.placeholderText().contains(QLatin1String("missing.gif")));
  }

  void drawsTheFrameItIsTold() {
    ClipPlayer player;
    player.resize(300, 300);
    player.setFrames(solidFrames({8, 8}, {0xff0000, 0x00ff00, 0x0000ff}));
    player.setTitle(QStringLiteral("original"));
    player.setCaptionLines({QStringLiteral("PSNR 24.00 dB"), QStringLiteral("SSIM 0.800")});
    player.show();
    QVERIFY(QTest::qWaitForWindowExposed(&player));
    QCOMPARE(shownCentre(player), QRgb(0xff0000));

    QSignalSpy index(&player, &ClipPlayer::frameIndexChanged);
    player.setFrameIndex(2);
    QCOMPARE(index.count(), 1);
    QCOMPARE(player.shownFrameIndex(), 2);
    QCOMPARE(shownCentre(player), QRgb(0x0000ff));
    player.setFrameIndex(2);  // no change, no signal
    QCOMPARE(index.count(), 1);
    player.setFrameIndex(9);  // past the end: holds the last frame
    QCOMPARE(player.frameIndex(), 9);
    QCOMPARE(player.shownFrameIndex(), 2);
    QCOMPARE(shownCentre(player), QRgb(0x0000ff));

    // Empty: no frame rect, the placeholder is drawn instead.
    player.setPlaceholderText(QStringLiteral("Nothing here"));
    player.clear();
    QCOMPARE(player.shownFrameIndex(), -1);
    QVERIFY(player.frameRectInPlayer().isEmpty());
    QVERIFY(player.currentFrame().isNull());
  }

  void zoomsByWholePixels() {
    ClipPlayer player;
    player.resize(360, 360);
    // A 2x2 checkerboard of 8x8 pixels: nearest neighbour keeps every enlarged pixel uniform.
    QImage board(8, 8, QImage::Format_RGB32);
    for (int y = 0; y < 8; ++y) {
      for (int x = 0; x < 8; ++x) board.setPixel(x, y, (x + y) % 2 ? 0xffffff : 0x000000);
    }
    player.setFrames({board});
    player.show();
    QVERIFY(QTest::qWaitForWindowExposed(&player));

    QSignalSpy zoomed(&player, &ClipPlayer::zoomChanged);
    player.setZoom(ClipPlayer::Zoom::X4);
    QCOMPARE(zoomed.count(), 1);
    QCOMPARE(player.zoom(), ClipPlayer::Zoom::X4);
    QCOMPARE(player.displayScale(), 4.0);
    QTRY_COMPARE(player.frameRectInPlayer().size(), QSize(32, 32));
    const QImage grab = player.grab().toImage();
    const qreal dpr = grab.devicePixelRatio();
    const QRect r = player.frameRectInPlayer();
    for (int y = 0; y < 32; ++y) {
      for (int x = 0; x < 32; ++x) {
        const QRgb expected = ((x / 4 + y / 4) % 2) ? 0xffffff : 0x000000;
        QCOMPARE(grab.pixel(int((r.left() + x) * dpr), int((r.top() + y) * dpr)) & 0xffffff,
                 expected);
      }
    }

    player.setZoom(ClipPlayer::Zoom::X1);
    QTRY_COMPARE(player.frameRectInPlayer().size(), QSize(8, 8));
    // Fit: as large as the space allows (360 pixels, less the player's margins).
    player.setZoom(ClipPlayer::Zoom::Fit);
    QTRY_VERIFY(player.displayScale() >= 40);
    QVERIFY(player.frameRectInPlayer().width() >= 320);
    QVERIFY(player.frameRectInPlayer().width() <= 360);
    QCOMPARE(zoomed.count(), 3);

    // Larger than the space at 4x: the frame scrolls rather than shrinking.
    player.setFrames({solid({200, 200}, 0x336699)});
    player.setZoom(ClipPlayer::Zoom::X4);
    QCOMPARE(player.displayScale(), 4.0);
    QVERIFY(player.frameRectInPlayer().width() < 800);  // the visible part only
  }

  void timelineKeepsPlayersInSync() {
    ClipTimeline timeline;
    ClipPlayer shortClip;
    ClipPlayer longClip;
    shortClip.setFrames(solidFrames({4, 4}, {0x111111, 0x222222, 0x333333}));
    longClip.setFrames(solidFrames({4, 4}, {1, 2, 3, 4, 5}));
    QSignalSpy counts(&timeline, &ClipTimeline::frameCountChanged);
    timeline.attach(&shortClip);
    timeline.attach(&longClip);
    timeline.attach(&longClip);  // twice: once
    QCOMPARE(timeline.players().size(), 2);
    QCOMPARE(timeline.frameCount(), 5);
    QCOMPARE(counts.count(), 2);

    QSignalSpy moved(&timeline, &ClipTimeline::frameIndexChanged);
    timeline.stepForward();
    QCOMPARE(timeline.frameIndex(), 1);
    QCOMPARE(shortClip.frameIndex(), 1);
    QCOMPARE(longClip.frameIndex(), 1);
    timeline.setFrameIndex(4);
    QCOMPARE(longClip.shownFrameIndex(), 4);
    QCOMPARE(shortClip.shownFrameIndex(), 2);  // holds its last frame
    timeline.stepForward();                    // wraps
    QCOMPARE(timeline.frameIndex(), 0);
    timeline.stepBackward();  // wraps back
    QCOMPARE(timeline.frameIndex(), 4);
    timeline.setFrameIndex(99);  // clamped
    QCOMPARE(timeline.frameIndex(), 4);
    QCOMPARE(moved.count(), 4);

    // The transport's own controls drive it too.
    auto* slider = timeline.findChild<QSlider*>(QStringLiteral("frameSlider"));
    QVERIFY(slider != nullptr);
    QCOMPARE(slider->maximum(), 4);
    slider->setValue(2);
    QCOMPARE(longClip.frameIndex(), 2);
    timeline.findChild<QToolButton*>(QStringLiteral("nextFrame"))->click();
    QCOMPARE(shortClip.frameIndex(), 3);

    // Playing advances every player and loops; pausing stops.
    QSignalSpy playing(&timeline, &ClipTimeline::playingChanged);
    timeline.setFps(50);
    timeline.play();
    QVERIFY(timeline.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(moved.count() >= 12, 3000);  // past the end and around
    timeline.pause();
    QVERIFY(!timeline.isPlaying());
    QCOMPARE(playing.count(), 2);
    const int stoppedAt = timeline.frameIndex();
    QTest::qWait(100);
    QCOMPARE(timeline.frameIndex(), stoppedAt);
    QCOMPARE(longClip.frameIndex(), stoppedAt);

    // A player that goes away detaches; one frame cannot play.
    {
      auto extra = std::make_unique<ClipPlayer>();
      extra->setFrames(solidFrames({4, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
      timeline.attach(extra.get());
      QCOMPARE(timeline.frameCount(), 8);
    }
    QCOMPARE(timeline.frameCount(), 5);
    QCOMPARE(timeline.players().size(), 2);
    timeline.detachAll();
    ClipPlayer still;
    still.setFrames({solid({4, 4}, 0)});
    timeline.attach(&still);
    timeline.play();
    QVERIFY(!timeline.isPlaying());
  }

  void keysDriveTheVisibleTimeline() {
    QWidget window;
    auto* timeline = new ClipTimeline(&window);
    auto* player = new ClipPlayer(&window);
    auto* layout = new QVBoxLayout(&window);
    layout->addWidget(player);
    layout->addWidget(timeline);
    player->setFrames(solidFrames({4, 4}, {1, 2, 3, 4}));
    timeline->attach(player);
    window.show();
    QApplication::setActiveWindow(&window);
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_Period);
    QCOMPARE(player->frameIndex(), 1);
    QTest::keyClick(&window, Qt::Key_Comma);
    QTest::keyClick(&window, Qt::Key_Comma);
    QCOMPARE(player->frameIndex(), 3);  // wrapped
    QTest::keyClick(&window, Qt::Key_Space);
    QVERIFY(timeline->isPlaying());
    QTest::keyClick(&window, Qt::Key_Space);
    QVERIFY(!timeline->isPlaying());
    timeline->hide();  // a hidden timeline (another page's) does not answer
    QTest::keyClick(&window, Qt::Key_Period);
    QCOMPARE(timeline->frameIndex(), 3);
  }

  void differenceMapsShowWhereFramesDiffer() {
    const QImage original = solid({6, 4}, qRgb(100, 100, 100));
    QImage recon = original;
    recon.setPixel(2, 1, qRgb(130, 130, 130));  // 30 levels off in every channel
    recon.setPixel(4, 3, qRgb(100, 100, 109));  // 9 levels off in blue only: mean 3
    const QVector<float> d = tb::widgets::meanAbsoluteDifference(original, recon);
    QCOMPARE(d.size(), 24);
    QCOMPARE(d[1 * 6 + 2], 30.0f);
    QCOMPARE(d[3 * 6 + 4], 3.0f);
    QCOMPARE(d[0], 0.0f);
    QCOMPARE(tb::widgets::maxMeanAbsoluteDifference({original}, {recon}), 30.0);
    QCOMPARE(tb::widgets::roundScaleMax(30), 32.0);
    QCOMPARE(tb::widgets::roundScaleMax(0.5), 4.0);
    QCOMPARE(tb::widgets::roundScaleMax(200), 255.0);

    const QImage heat = tb::widgets::differenceImage(original, recon, 32);
    QCOMPARE(heat.size(), original.size());
    QCOMPARE(heat.pixel(0, 0) & 0xffffff, tb::widgets::infernoColor(0) & 0xffffff);
    QCOMPARE(heat.pixel(2, 1) & 0xffffff, tb::widgets::infernoColor(30.0 / 32) & 0xffffff);
    QVERIFY(qGray(heat.pixel(2, 1)) > qGray(heat.pixel(4, 3)));
    QVERIFY(qGray(heat.pixel(4, 3)) > qGray(heat.pixel(0, 0)));
    QVERIFY(tb::widgets::differenceImage(original, solid({3, 3}, 0), 32).isNull());
    // The colour map runs from near black to pale yellow.
    QVERIFY(qGray(tb::widgets::infernoColor(0)) < 10);
    QVERIFY(qGray(tb::widgets::infernoColor(1)) > 230);
    QCOMPARE(tb::widgets::differenceFrames({original}, {recon, recon}, 32).size(), 2);
  }

  void scaleBarDrawsTheColourMap() {
    tb::widgets::ColorScaleBar bar;
    bar.setMaximum(32);
    bar.resize(bar.sizeHint());
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    const QImage grab = bar.grab().toImage();
    const qreal dpr = grab.devicePixelRatio();
    // The bar's left end is dark, its right end bright.
    const int y = int(6 * dpr);
    const QRgb left = grab.pixel(int(24 * dpr), y);
    const QRgb right = grab.pixel(int((bar.width() - 24) * dpr), y);
    QVERIFY2(qGray(left) < 80 && qGray(right) > 180,
             qPrintable(QStringLiteral("left %1 right %2").arg(qGray(left)).arg(qGray(right))));
    QCOMPARE(bar.maximum(), 32.0);
    bar.setMaximum(-1);  // ignored
    QCOMPARE(bar.maximum(), 32.0);
  }
};

QTEST_MAIN(ClipPlayerTest)
#include "test_clip_player.moc"
