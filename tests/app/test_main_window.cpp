// MainWindow smoke test, offscreen: size, pages by name, real pixels, remembered geometry,
// clean close. Settings go to a temporary directory, never the user's configuration.
#include "app/gui/main_window.h"

#include "app/control/page_id.h"
#include "app/control/trainer_location.h"
#include "app/gui/pages/compare_page.h"
#include "app/gui/pages/monitor/monitor_page.h"
#include "app/gui/pages/runs_page.h"
#include "app/gui/pages/samples_page.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/user_guide_dialog.h"
#include "app/gui/window_settings.h"
#include "core/version.h"
#include "widgets/curve_plot.h"

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QObject>
#include <QScrollBar>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QUrl>

using tb::app::MainWindow;
using tb::app::PageId;

namespace {

// A run directory as a trainer starts one: a folder with its config.json.
bool makeRun(const QString& path) {
  QFile config(QDir(path).filePath(QStringLiteral("config.json")));
  return QDir().mkpath(path) && config.open(QIODevice::WriteOnly) && config.write("{}\n") == 3;
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_settingsDir.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
  }

  void init() {
    QSettings settings(QString::fromLatin1(tb::app::WindowSettings::kOrganization),
                       QString::fromLatin1(tb::app::WindowSettings::kApplication));
    settings.clear();
    settings.sync();
    QVERIFY2(settings.fileName().startsWith(m_settingsDir.path()),
             qPrintable("settings escaped to " + settings.fileName()));
  }

  void opensAtLeast1280x800() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY2(window.width() >= 1280 && window.height() >= 800,
             qPrintable(QStringLiteral("%1x%2").arg(window.width()).arg(window.height())));
    QVERIFY(!window.restoreWindowState());  // nothing remembered yet
  }

  void everyPageIsSelectableByName() {
    MainWindow window;
    auto* navigation = window.findChild<QListWidget*>(QStringLiteral("navigation"));
    auto* pages = window.findChild<QStackedWidget*>(QStringLiteral("pages"));
    QVERIFY(navigation && pages);
    QCOMPARE(navigation->count(), 5);
    QCOMPARE(window.currentPage(), PageId::Setup);
    for (PageId page : tb::app::kAllPages) {
      const std::optional<PageId> byName = tb::app::pageFromName(tb::app::pageName(page));
      QVERIFY(byName.has_value());
      window.setCurrentPage(*byName);
      QCOMPARE(window.currentPage(), page);
      QCOMPARE(pages->currentWidget(), window.pageWidget(page));
      QCOMPARE(navigation->currentItem()->text(),
               QString::fromUtf8(tb::app::pageTitle(page).data()));
    }
    // Clicking in the navigation list switches pages too.
    navigation->setCurrentRow(1);
    QCOMPARE(window.currentPage(), PageId::Monitor);
    QCOMPARE(pages->currentWidget(), static_cast<QWidget*>(window.monitorPage()));
  }

  void grabRendersARealWindow() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (PageId page : tb::app::kAllPages) {
      window.setCurrentPage(page);
      const QImage image = window.grab().toImage();
      QVERIFY(!image.isNull());
      QCOMPARE(image.size(), window.size() * image.devicePixelRatio());
      QSet<QRgb> colors;
      for (int y = 0; y < image.height(); y += 3) {
        for (int x = 0; x < image.width(); x += 3) {
          colors.insert(image.pixel(x, y));
        }
      }
      QVERIFY2(colors.size() > 8,
               qPrintable(QStringLiteral("page %1: only %2 colours")
                              .arg(QString::fromUtf8(tb::app::pageName(page).data()))
                              .arg(colors.size())));
    }
  }

  void emptyPagesSayNothingIsOpen() {
    MainWindow window;
    QCOMPARE(window.monitorPage()->emptyHeadline(), QStringLiteral("No run open"));
    QVERIFY(!window.monitorPage()->isShowingPlot());
    QCOMPARE(window.samplesPage()->emptyHeadline(), QStringLiteral("No run open"));
    QCOMPARE(window.comparePage()->emptyHeadline(), QStringLiteral("Nothing to compare"));
    QVERIFY(window.runsPage()->runDirectories().isEmpty());

    // The plot appears once it has data, and not before.
    window.monitorPage()->curvePlot()->appendPoint(QStringLiteral("loss"), 0, 1);
    QTRY_VERIFY(window.monitorPage()->isShowingPlot());
    window.monitorPage()->curvePlot()->clear();
    QTRY_VERIFY(!window.monitorPage()->isShowingPlot());
  }

  void opensRunDirectories() {
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    const QString run = runs.filePath(QStringLiteral("run-042"));
    QVERIFY(makeRun(run));
    MainWindow window;
    QSignalSpy opened(&window, &MainWindow::runDirectoryOpened);
    const QString target = window.setupPage()->runDirectoryText();

    QVERIFY(window.openRunDirectory(run));
    QCOMPARE(opened.count(), 1);
    QCOMPARE(window.runsPage()->runDirectories(), QStringList{run});
    QVERIFY(window.monitorPage()->emptyHeadline().contains(QLatin1String("run-042")));
    // Where the next launch goes is the Setup page's, not the opened run's folder.
    QCOMPARE(window.setupPage()->runDirectoryText(), target);
    QVERIFY(window.windowTitle().contains(QLatin1String("run-042")));

    QVERIFY(window.openRunDirectory(run));  // again: listed once
    QCOMPARE(window.runsPage()->runDirectories().size(), 1);

    const QString missing = runs.filePath(QStringLiteral("missing"));
    QVERIFY(!window.openRunDirectory(missing));
    QVERIFY(window.statusBar()->currentMessage().contains(missing));
    QCOMPARE(window.runsPage()->runDirectories().size(), 1);

    const QString second = runs.filePath(QStringLiteral("run-043"));
    QVERIFY(makeRun(second));
    QVERIFY(window.openRunDirectory(second));
    QCOMPARE(window.comparePage()->emptyHeadline(), QStringLiteral("No comparison of run-043 yet"));
  }

  // File > Open Run Directory, as a user does it: the run is shown (on the Monitor), and the
  // Setup page still sends new runs where it did.
  void openingARunShowsItAndKeepsTheRunsFolder() {
    QTemporaryDir runs;
    QVERIFY(runs.isValid());
    const QString run = runs.filePath(QStringLiteral("elsewhere/run-7"));
    QVERIFY(makeRun(run));
    MainWindow window;
    window.setRemembersWindowState(false);
    const QString target = runs.filePath(QStringLiteral("mine/next-run"));
    window.setupPage()->setRunDirectory(target);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QCOMPARE(window.currentPage(), PageId::Setup);
    QCOMPARE(window.setupPage()->runDirectory(), target);

    // The folder dialog answers with the run.
    auto* poll = new QTimer(&window);
    poll->setInterval(20);
    connect(poll, &QTimer::timeout, [poll, run] {
      auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
      if (dialog == nullptr) return;
      poll->stop();
      dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"))->setText(run);
      static_cast<QDialog*>(dialog)->accept();
    });
    poll->start();
    window.findChild<QAction*>(QStringLiteral("openRunDirectoryAction"))->trigger();
    QVERIFY(window.waitForReads());
    QCOMPARE(window.openRunDirectoryPath(), run);
    QCOMPARE(window.currentPage(), PageId::Monitor);
    QCOMPARE(window.monitorPage()->runDirectory(), run);
    QCOMPARE(window.setupPage()->runDirectory(), target);

    // Open Recent, from another page: the same.
    window.setCurrentPage(PageId::Setup);
    auto* recent = window.findChild<QMenu*>(QStringLiteral("recentRunsMenu"));
    Q_EMIT recent->aboutToShow();
    QAction* entry = nullptr;
    for (QAction* action : recent->actions()) {
      if (action->data().toString() == run) entry = action;
    }
    QVERIFY(entry != nullptr);
    entry->trigger();
    QVERIFY(window.waitForReads());
    QCOMPARE(window.currentPage(), PageId::Monitor);
    QCOMPARE(window.setupPage()->runDirectory(), target);
  }

  // Help > User Guide (F1) shows the guide in the window, links between documents working.
  void f1ShowsTheUserGuide() {
    QVERIFY2(!MainWindow::userGuidePath().isEmpty(), "docs/user-guide.md not found");
    MainWindow window;
    window.setRemembersWindowState(false);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(&window, Qt::Key_F1);
    tb::app::UserGuideDialog* guide = window.userGuideDialog();
    QVERIFY(guide != nullptr);
    QTRY_VERIFY(guide->isVisible());
    QTextBrowser* browser = guide->browser();
    QVERIFY(QTest::qWaitForWindowExposed(guide));
    // Rendered from Markdown: the heading's text, without its "#".
    QVERIFY2(browser->toPlainText().startsWith(QLatin1String("Tokenbench user guide")),
             qPrintable(browser->toPlainText().left(200)));
    QVERIFY(browser->toPlainText().contains(QLatin1String("Everything a run produces")));
    QVERIFY(browser->document()->toMarkdown().contains(QLatin1String("# Tokenbench user guide")));
    const QImage shot = guide->grab().toImage();
    QVERIFY(!shot.isNull());
    QVERIFY2(guide->width() <= 1024 && guide->height() <= 640,
             qPrintable(QStringLiteral("%1x%2").arg(guide->width()).arg(guide->height())));

    // A heading within the guide, another document, and back.
    QCOMPARE(browser->verticalScrollBar()->value(), 0);
    browser->setSource(QUrl(QStringLiteral("#the-run-directory")));
    QTRY_VERIFY(browser->verticalScrollBar()->value() > 0);
    browser->setSource(QUrl(QStringLiteral("configuration.md")));
    QCOMPARE(QFileInfo(guide->currentPath()).fileName(), QStringLiteral("configuration.md"));
    QVERIFY(!browser->toPlainText().contains(QLatin1String("Everything a run produces")));
    QVERIFY(browser->isBackwardAvailable());
    browser->backward();
    QCOMPARE(QFileInfo(guide->currentPath()).fileName(), QStringLiteral("user-guide.md"));

    // Asked for again (Help > User Guide): the same window, not a second one.
    guide->hide();
    window.findChild<QAction*>(QStringLiteral("userGuideAction"))->trigger();
    QCOMPARE(window.userGuideDialog(), guide);
    QTRY_VERIFY(guide->isVisible());
  }

  void showsTheTrainer() {
    MainWindow window;
    auto* status = window.findChild<QLabel*>(QStringLiteral("trainerStatus"));
    QVERIFY(status != nullptr);
    tb::app::TrainerLocation missing;
    missing.problem = QStringLiteral("tokenbench-trainer not found in /nowhere");
    window.setTrainerLocation(missing);
    QCOMPARE(status->text(), QStringLiteral("Trainer: not found"));
    QVERIFY(window.setupPage()->trainerText().contains(QLatin1String("/nowhere")));

    tb::app::TrainerLocation found;
    found.path = QStringLiteral("/opt/tb/tokenbench-trainer");
    found.origin = QStringLiteral("--trainer");
    window.setTrainerLocation(found);
    QCOMPARE(status->text(), QStringLiteral("Trainer: tokenbench-trainer"));
    QVERIFY(window.setupPage()->trainerText().contains(found.path));
  }

  void remembersGeometryAndPage() {
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      window.resize(1400, 900);
      window.setCurrentPage(PageId::Compare);
      QTRY_COMPARE(window.size(), QSize(1400, 900));
      QVERIFY(window.close());
    }
    QVERIFY(!tb::app::WindowSettings().geometry().isEmpty());
    QCOMPARE(tb::app::WindowSettings().lastPage(), std::optional<PageId>(PageId::Compare));

    MainWindow restored;
    QVERIFY(restored.restoreWindowState());
    QCOMPARE(restored.size(), QSize(1400, 900));
    QCOMPARE(restored.currentPage(), PageId::Compare);
  }

  void screenshotWindowsLeaveSettingsAlone() {
    MainWindow window;
    window.setRemembersWindowState(false);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(window.close());
    QVERIFY(tb::app::WindowSettings().geometry().isEmpty());
  }

  void menusAndAbout() {
    MainWindow window;
    for (const char* name : {"openRunDirectoryAction", "quitAction", "aboutAction"}) {
      QVERIFY2(window.findChild<QAction*>(QString::fromLatin1(name)) != nullptr, name);
    }
    const QString about = MainWindow::aboutText();
    QVERIFY(about.contains(QString::fromStdString(tb::core::versionString())));
    QVERIFY(about.contains(QLatin1String("GNU General Public License")));
  }

  // Last, since it runs the application's event loop to its end, as File > Quit does.
  void quitEndsTheEventLoopWithStatusZero() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* quit = window.findChild<QAction*>(QStringLiteral("quitAction"));
    QVERIFY(quit != nullptr);
    QVERIFY(QGuiApplication::quitOnLastWindowClosed());
    QTimer watchdog;  // a window that fails to close must not hang the test
    watchdog.setSingleShot(true);
    connect(&watchdog, &QTimer::timeout, [] { QCoreApplication::exit(3); });
    watchdog.start(10000);
    QTimer::singleShot(0, quit, &QAction::trigger);
    QCOMPARE(QApplication::exec(), 0);
    QVERIFY(watchdog.isActive());
    QVERIFY(!window.isVisible());
    QVERIFY(!tb::app::WindowSettings().geometry().isEmpty());  // closing saved the state
  }

 private:
  QTemporaryDir m_settingsDir;
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
