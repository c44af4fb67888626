// The window as a new user meets it (issue 22): each test drives the window the way the first
// session did, with real events where Qt offers them (clicks, key presses, wheel events, resizes)
// and the fake trainer for runs that are killed, stopped and resumed, and checks what went wrong
// there no longer does.
#include "app/main_window.h"
#include "app/pages/compare_page.h"
#include "app/pages/compare_review.h"
#include "app/pages/compare_setup_form.h"
#include "app/pages/monitor_page.h"
#include "app/pages/runs_page.h"
#include "app/pages/samples_page.h"
#include "app/pages/setup_page.h"
#include "app/run_control_bar.h"
#include "app/run_controller.h"
#include "app/trainer_location.h"
#include "app/window_settings.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLayout>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using tb::app::MainWindow;
using tb::app::PageId;

class FirstSessionTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void fitsA1024x640Screen() {
    MainWindow window;
    window.setRemembersWindowState(false);
    for (PageId page : tb::app::kAllPages) {
      qInfo() << int(page) << window.pageWidget(page)->minimumSizeHint();
    }
    qInfo() << "window" << window.minimumSizeHint();
    for (PageId page : {PageId::Monitor, PageId::Compare, PageId::Samples}) {
      for (QWidget* w : window.pageWidget(page)->findChildren<QWidget*>()) {
        const QSize m = w->minimumSizeHint().expandedTo(w->minimumSize());
        if ((m.width() > 450 || m.height() > 250))
          qInfo() << int(page) << w->metaObject()->className() << w->objectName() << m
                  << (w->layout() ? w->layout()->minimumSize() : QSize());
      }
    }
    window.runControlBar()->findChildren<QWidget*>();
    qInfo() << "bar" << window.runControlBar()->minimumSizeHint();
  }
};

QTEST_MAIN(FirstSessionTest)
#include "test_first_session.moc"
