// The window on the smallest screens it supports (issue 39): at 1024x600, in every state of a
// run (idle, training with an alert shown and Details open, stopping, completed, failed) and on
// every page, it asks no more of the screen than that and shows what a user reaches for (the
// ETA, the alert's Dismiss, the Details toggle, the status bar) whole; the Setup page is usable
// at 1024x640. Runs of the fake trainer. Screenshots: TB_APP_SCREENSHOT_DIR/fit-*.png.
#include "app/control/page_id.h"
#include "app/control/run_controller.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/alert_banner.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/window_settings.h"
#include "tests/app/window_geometry.h"
#include "widgets/curve_plot.h"
#include "widgets/elided_label.h"

#include <QApplication>
#include <QDir>
#include <QGroupBox>
#include <QLineEdit>
#include <QListWidget>
#include <QObject>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

using tb::app::MainWindow;
using tb::app::PageId;
using tb::app::RunController;
using tb::test::describe;
using tb::test::insideWindow;
using State = RunController::State;

namespace {

constexpr int kTimeoutMs = 30000;
// A 1024x600 netbook screen; and 1024x640, where the Setup page must be usable too.
const QSize kSmall(1024, 600);
const QSize kSmallSetup(1024, 640);

bool waitForEnd(RunController* controller) {
  QSignalSpy finished(controller, &RunController::finished);
  return !controller->isActive() || finished.wait(kTimeoutMs);
}

QString pageText(PageId page) { return QString::fromUtf8(tb::app::pageName(page).data()); }

// Lets the layout requests a change posted run, as a shown window's event loop would.
void settle() {
  for (int i = 0; i < 3; ++i) {
    QApplication::processEvents();
    QTest::qWait(10);
  }
}

}  // namespace

class TestWindowFit : public QObject {
  Q_OBJECT

 private:
  void prepare(MainWindow& window, const QString& runName, QSize size = kSmall) {
    window.setRemembersWindowState(false);
    tb::app::TrainerLocation trainer;
    trainer.path = QStringLiteral(TB_FAKE_TRAINER);
    trainer.origin = QStringLiteral("--trainer");
    window.setTrainerLocation(trainer);
    window.setupPage()->setRunDirectory(m_dir.filePath(QStringLiteral("runs/") + runName));
    window.resize(size);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_VERIFY(!window.setupPage()->dataInfoQuery()->isBusy());
  }

  void shoot(MainWindow& window, const QString& name) {
    const QString dir = QStringLiteral(TB_APP_SCREENSHOT_DIR);
    QDir().mkpath(dir);
    QVERIFY(window.grab().save(dir + QStringLiteral("/fit-") + name + QStringLiteral(".png")));
  }

  template <class T = QWidget>
  static T* child(QWidget& parent, const char* name) {
    T* widget = parent.findChild<T*>(QString::fromLatin1(name));
    if (widget == nullptr) qWarning("no %s", name);
    return widget;
  }

  // On every page: the window asks for no more than 1024x600, and at 1024x600 shows whole the
  // bar's controls, the status bar and, in their states, the ETA and the alert's buttons.
  void checkEveryPage(MainWindow& window, const QString& state) {
    for (PageId page : tb::app::kAllPages) {
      window.setCurrentPage(page);
      settle();
      const QSize smallest = window.minimumSizeHint().expandedTo(window.minimumSize());
      QVERIFY2(smallest.width() <= kSmall.width() && smallest.height() <= kSmall.height(),
               qPrintable(QStringLiteral("%1, %2 page: the window needs %3x%4")
                              .arg(state, pageText(page))
                              .arg(smallest.width())
                              .arg(smallest.height())));
      window.resize(kSmall);
      settle();
      QCOMPARE(window.size(), kSmall);

      QList<QWidget*> shown = {child(window, "launchButton"),     child(window, "stopButton"),
                               child(window, "checkpointButton"), child(window, "detailsToggle"),
                               child(window, "runState"),         window.statusBar(),
                               child(window, "trainerStatus")};
      if (window.runControlBar()->detailsVisible()) shown << child(window, "runDetails");
      auto* rate = child<tb::widgets::ElidedLabel>(window, "runRate");
      QVERIFY(rate != nullptr);
      if (!rate->isHidden()) {
        shown << rate << child(window, "runProgress");
        // The ETA is never cut; the rate after it may be.
        const QString eta = rate->fullText().section(QStringLiteral(" \u00b7 "), 0, 0);
        QVERIFY2(eta.startsWith(QLatin1String("ETA ")), qPrintable(rate->fullText()));
        QVERIFY2(rate->text().startsWith(eta),
                 qPrintable(QStringLiteral("%1: shows \"%2\"").arg(state, rate->text())));
      }
      tb::app::AlertBanner* banner = window.monitorPage()->alertBanner();
      if (page == PageId::Monitor && !banner->isHidden()) {
        shown << banner << child(*banner, "alertDismissButton")
              << child(*banner, "alertDetailsButton");
      }
      for (QWidget* widget : shown) {
        QVERIFY(widget != nullptr);
        QVERIFY2(
            insideWindow(widget),
            qPrintable(
                QStringLiteral("%1, %2 page: %3").arg(state, pageText(page), describe(widget))));
      }
      // Every plot of the Monitor is whole across (the grid takes the columns that fit).
      if (page == PageId::Monitor && window.monitorPage()->isShowingPlot()) {
        for (const QString& id : window.monitorPage()->shownPanelIds()) {
          tb::widgets::CurvePlot* plot = window.monitorPage()->panel(id);
          const QRect rect = tb::test::rectInWindow(plot);
          QVERIFY2(rect.right() < window.width(),
                   qPrintable(state + QStringLiteral(": ") + describe(plot)));
        }
      }
      shoot(window, state + QLatin1Char('-') + pageText(page));
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    tb::app::WindowSettings().clearRecentRuns();
  }

  void init() {
    for (const char* name : {"TB_FAKE_STEPS", "TB_FAKE_STEP_MS", "TB_FAKE_WARN_AT"}) {
      qunsetenv(name);
    }
    qputenv("TB_FAKE_MODE", "normal");
  }

  void idleWindowFits() {
    MainWindow window;
    prepare(window, QStringLiteral("idle"));
    checkEveryPage(window, QStringLiteral("idle"));
  }

  // Training, with a rollback alert on the Monitor and Details open: the progress bar, the
  // ETA and the alert's buttons are all in a 1024x600 window.
  void trainingWithAnAlertFits() {
    qputenv("TB_FAKE_STEPS", "100000");
    qputenv("TB_FAKE_STEP_MS", "20");
    qputenv("TB_FAKE_WARN_AT", "3");
    MainWindow window;
    prepare(window, QStringLiteral("training-with-a-long-name-2024-06-01"));
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    tb::app::AlertBanner* banner = window.monitorPage()->alertBanner();
    QTRY_VERIFY_WITH_TIMEOUT(banner->alertCount() > 0, kTimeoutMs);
    QVERIFY(!banner->isHidden());
    window.setCurrentPage(PageId::Monitor);
    QTRY_VERIFY_WITH_TIMEOUT(window.monitorPage()->isShowingPlot(), kTimeoutMs);
    // The alert's list: the long message wraps, no horizontal scroll bar over it.
    QTest::mouseClick(child<QToolButton>(*banner, "alertDetailsButton"), Qt::LeftButton);
    auto* alerts = child<QListWidget>(*banner, "alertDetails");
    QVERIFY(alerts != nullptr && alerts->isVisible());
    QVERIFY(!alerts->horizontalScrollBar()->isVisible());
    QVERIFY2(alerts->visualItemRect(alerts->item(0)).height() > 2 * alerts->fontMetrics().height(),
             "the alert's message is on one line, cut");
    QTest::mouseClick(child<QToolButton>(window, "detailsToggle"), Qt::LeftButton);
    QVERIFY(window.runControlBar()->detailsVisible());
    QCOMPARE(window.runController()->state(), State::Running);
    checkEveryPage(window, QStringLiteral("training"));
    QCOMPARE(window.runController()->state(), State::Running);  // still, to the last page
    window.runControlBar()->stop();
    QVERIFY(waitForEnd(window.runController()));
    // Once the run has ended the window still fits (nothing it grew for stays).
    checkEveryPage(window, QStringLiteral("stopped"));
  }

  // Stop says, in a whole sentence that fits at 1024 px, why the run goes on for a while.
  void stoppingSaysWhatHappensInFull() {
    qputenv("TB_FAKE_MODE", "ignore-stop");  // goes on stepping after the stop line
    MainWindow window;
    prepare(window, QStringLiteral("stopping"));
    window.runController()->setStopGracePeriodMs(60000);
    QSignalSpy progress(window.runController(), &RunController::progressReceived);
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(progress.wait(kTimeoutMs));
    QTest::mouseClick(window.runControlBar()->stopButton(), Qt::LeftButton);
    QCOMPARE(window.runController()->state(), State::Stopping);
    QVERIFY(progress.wait(kTimeoutMs));  // the trainer ends its step: progress goes on
    const QString sentence =
        QStringLiteral("Stopping after the current step; a checkpoint is being written");
    QCOMPARE(window.runControlBar()->stateText(), sentence);
    shoot(window, QStringLiteral("stopping"));
    for (PageId page : tb::app::kAllPages) {
      window.setCurrentPage(page);
      settle();
      auto* state = child<tb::widgets::ElidedLabel>(window, "runState");
      QVERIFY(state != nullptr);
      QVERIFY2(!state->isElided(),
               qPrintable(QStringLiteral("%1 page: \"%2\"").arg(pageText(page), state->text())));
      QVERIFY2(insideWindow(state), qPrintable(describe(state)));
      QCOMPARE(state->text().simplified(), sentence);  // whole, on one line or two
    }
    checkEveryPage(window, QStringLiteral("stopping"));
    QTest::mouseClick(window.runControlBar()->stopButton(), Qt::LeftButton);  // SIGTERM
    QVERIFY(waitForEnd(window.runController()));
  }

  void completedRunFits() {
    MainWindow window;
    prepare(window, QStringLiteral("completed"));
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(waitForEnd(window.runController()));
    QCOMPARE(window.runController()->state(), State::Completed);
    QTest::mouseClick(child<QToolButton>(window, "detailsToggle"), Qt::LeftButton);
    QVERIFY(window.runControlBar()->detailsVisible());
    checkEveryPage(window, QStringLiteral("completed"));
  }

  // A failure opens Details with the error, its hint and the log's last lines: they wrap to the
  // window's width and take a few lines, no horizontal scroll bar over them.
  void failedRunFitsWithItsDetails() {
    qputenv("TB_FAKE_MODE", "fail");
    MainWindow window;
    prepare(window, QStringLiteral("failed"));
    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(waitForEnd(window.runController()));
    QVERIFY(window.runControlBar()->detailsVisible());
    checkEveryPage(window, QStringLiteral("failed"));
    auto* details = child<QPlainTextEdit>(window, "runDetails");
    QVERIFY(details != nullptr);
    QVERIFY(!details->horizontalScrollBar()->isVisible());
    QVERIFY2(details->height() > 4 * details->fontMetrics().lineSpacing(),
             qPrintable(describe(details)));
  }

  // The Setup page at 1024x640: every panel's two columns whole across (or a scroll bar that
  // shows), the data path from its start, and most of the page's height for the form.
  void setupPageIsUsableAt1024x640() {
    MainWindow window;
    prepare(window, QStringLiteral("setup"), kSmallSetup);
    tb::app::SetupPage* setup = window.setupPage();
    window.setCurrentPage(PageId::Setup);
    const QString path = QStringLiteral("/home/someone/datasets/kinetics-600/train/videos");
    setup->setValue(QStringLiteral("data.path"), path.toStdString());
    // Two problems listed under the form, as a user who is still editing has.
    setup->setValue(QStringLiteral("train.lr"), 0);
    setup->setValue(QStringLiteral("train.max_steps"), -5);
    settle();
    QCOMPARE(window.size(), kSmallSetup);

    auto* pathInput =
        qobject_cast<QLineEdit*>(setup->fieldEditor(QStringLiteral("data.path"))->input());
    QVERIFY(pathInput != nullptr);
    QCOMPARE(pathInput->text(), path);
    QVERIFY2(pathInput->cursorPosition() == 0, "the data path shows its end, not its start");

    auto* tabs = child<QTabWidget>(*setup, "setupTabs");
    QVERIFY(tabs != nullptr);
    for (int panel = 0; panel < tabs->count(); ++panel) {
      tabs->setCurrentIndex(panel);
      settle();
      auto* scroll = qobject_cast<QScrollArea*>(tabs->currentWidget());
      QVERIFY(scroll != nullptr);
      const QString name = tabs->tabText(panel);
      shoot(window, QStringLiteral("setup-") + QString::number(panel));
      QVERIFY2(scroll->widget()->width() <= scroll->viewport()->width() ||
                   scroll->horizontalScrollBar()->isVisible(),
               qPrintable(QStringLiteral("%1: %2 px of content in a %3 px view, no scroll bar")
                              .arg(name)
                              .arg(scroll->widget()->width())
                              .arg(scroll->viewport()->width())));
      // Better still: no scroll bar needed at 1024 px, every group whole across.
      for (QGroupBox* group : scroll->widget()->findChildren<QGroupBox*>()) {
        if (group->isHidden() || group->parentWidget() != scroll->widget()) continue;
        const QRect rect = tb::test::rectInWindow(group);
        QVERIFY2(rect.right() < tb::test::rectInWindow(scroll->viewport()).right() + 1,
                 qPrintable(name + QStringLiteral(": ") + describe(group)));
      }
    }
    tabs->setCurrentIndex(0);
    settle();
    for (const char* name : {"rescanButton", "dataInfoView", "presetBox", "saveButton"}) {
      QWidget* widget = child(*setup, name);
      QVERIFY2(widget != nullptr, name);
      const QRect rect = tb::test::rectInWindow(widget);
      QVERIFY2(rect.right() < window.width(), qPrintable(describe(widget)));
    }
    // The problems wrap to the page's width, whole, with no scroll bar across them.
    auto* problems = child<QListWidget>(*setup, "problemList");
    QVERIFY(problems != nullptr);
    QCOMPARE(problems->count(), 2);
    QVERIFY(!problems->horizontalScrollBar()->isVisible());
    for (int row = 0; row < problems->count(); ++row) {
      const QRect item = problems->visualItemRect(problems->item(row));
      QVERIFY2(problems->viewport()->rect().contains(item),
               qPrintable(QStringLiteral("problem %1 at %2,%3 %4x%5 in a %6x%7 list")
                              .arg(row)
                              .arg(item.x())
                              .arg(item.y())
                              .arg(item.width())
                              .arg(item.height())
                              .arg(problems->viewport()->width())
                              .arg(problems->viewport()->height())));
    }
    // The form (the panels' scrolled area) gets most of the page's height.
    QVERIFY2(tabs->height() * 2 > setup->height(),
             qPrintable(QStringLiteral("the panels get %1 of the page's %2 px")
                            .arg(tabs->height())
                            .arg(setup->height())));
    shoot(window, QStringLiteral("setup"));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestWindowFit)
#include "test_window_fit.moc"
