// The mouse wheel over the window's inputs, delivered as a window system delivers it: a
// spontaneous wheel event to the window, which QApplication hands to the widget under the
// pointer (giving wheel focus by focus policy on the way) and then up its parents. Every spin
// box, combo box and slider on every page (the Setup panels of a MAGVIT-v2 and a VQGAN preset,
// the layer stack editor's argument, the pages of an open run) is wheeled over without focus:
// its value and the configuration stay as they were, and the page scrolls instead. With focus
// (clicked or tabbed into), the wheel changes the value.
#include "app/control/page_id.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/window_settings.h"
#include "widgets/layer_stack_editor.h"
#include "widgets/wheel_filter.h"

#include <QtTest/qtestspontaneevent.h>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QListWidget>
#include <QPointer>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QWheelEvent>
#include <QWindow>

using tb::app::MainWindow;
using tb::app::PageId;
using tb::app::SetupPage;

namespace {

// Turns the wheel by `notches` with the pointer at `at` in `widget`, as the window system does:
// a spontaneous event to the window (what xcb delivers for a real mouse).
void turnWheel(QWidget* widget, QPoint at, int notches) {
  QWidget* top = widget->window();
  const QPointF inWindow = widget->mapTo(top, at);
  QWheelEvent event(inWindow, top->mapToGlobal(inWindow), QPoint(), QPoint(0, 120 * notches),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QSpontaneKeyEvent::setSpontaneous(&event);
  QApplication::instance()->notify(top->windowHandle(), &event);
}

// What an input shows: its text, choice or position.
QString shown(QWidget* input) {
  if (auto* spin = qobject_cast<QAbstractSpinBox*>(input)) return spin->text();
  if (auto* combo = qobject_cast<QComboBox*>(input))
    return QString::number(combo->currentIndex()) + QLatin1Char(' ') + combo->currentText();
  if (auto* slider = qobject_cast<QAbstractSlider*>(input)) return QString::number(slider->value());
  return {};
}

QString describe(QWidget* input) {
  QStringList names;
  for (QWidget* w = input; w != nullptr && !w->isWindow(); w = w->parentWidget()) {
    if (!w->objectName().isEmpty()) names.prepend(w->objectName());
    if (auto* editor = qobject_cast<tb::app::ConfigFieldEditor*>(w)) {
      names.prepend(editor->path());
      break;
    }
  }
  return QStringLiteral("%1 (%2)").arg(names.join(QLatin1Char('/')),
                                       QString::fromLatin1(input->metaObject()->className()));
}

// Brings `input` into view in every scroll area around it; true when the pointer at its centre
// would be over it (not over another widget).
bool bringIntoView(QWidget* input) {
  for (QWidget* up = input->parentWidget(); up != nullptr; up = up->parentWidget()) {
    if (auto* area = qobject_cast<QScrollArea*>(up)) area->ensureWidgetVisible(input, 0, 0);
  }
  QWidget* top = input->window();
  QWidget* under = top->childAt(input->mapTo(top, input->rect().center()));
  return under == input || input->isAncestorOf(under);
}

// The scroll bar that scrolls the page around `input`, if any can scroll.
QScrollBar* pageScrollBar(QWidget* input) {
  for (QWidget* up = input->parentWidget(); up != nullptr; up = up->parentWidget()) {
    if (auto* area = qobject_cast<QScrollArea*>(up)) {
      if (area->verticalScrollBar()->maximum() > 0) return area->verticalScrollBar();
    }
  }
  return nullptr;
}

}  // namespace

class WheelPolicyTest : public QObject {
  Q_OBJECT

 private:
  // The guarded inputs of the shown page that the pointer can reach.
  QList<QWidget*> inputsOf(QWidget* page) {
    QList<QWidget*> inputs;
    for (QWidget* w : page->findChildren<QWidget*>()) {
      if (tb::widgets::UnfocusedWheelFilter::guards(w) && w->isVisible() && w->isEnabled())
        inputs << w;
    }
    return inputs;
  }

  // Wheels over every input of the page shown without focus; adds how many to `wheeled`.
  void wheelOverUnfocused(MainWindow& window, QWidget* page, const QString& where,
                          int* wheeled = nullptr) {
    SetupPage* setup = window.setupPage();
    const std::string config = setup->configJsonText().toStdString();
    auto* navigation = window.findChild<QListWidget*>(QStringLiteral("navigation"));
    int scrolled = 0;
    for (QWidget* input : inputsOf(page)) {
      if (!input->isVisible() || !bringIntoView(input)) continue;
      navigation->setFocus();  // focus elsewhere, as after clicking the page list
      QVERIFY2(!input->hasFocus(), qPrintable(describe(input)));
      const QString before = shown(input);
      QScrollBar* bar = pageScrollBar(input);
      for (int notches : {-1, 1, 2, -2}) {
        // The page may have scrolled the input out from under the pointer: back under it.
        QVERIFY2(bringIntoView(input), qPrintable(describe(input)));
        const int barBefore = bar != nullptr ? bar->value() : 0;
        turnWheel(input, input->rect().center(), notches);
        QVERIFY2(shown(input) == before,
                 qPrintable(QStringLiteral("%1 on %2: %3 -> %4")
                                .arg(describe(input), where, before, shown(input))));
        QVERIFY2(!input->hasFocus(), qPrintable(describe(input) + QStringLiteral(" took focus")));
        if (bar != nullptr && bar->value() != barBefore) ++scrolled;
      }
      if (wheeled != nullptr) ++*wheeled;
      m_wheeled << input;
    }
    QVERIFY2(m_dialogs.isEmpty(), qPrintable(where + QStringLiteral(": the wheel opened ") +
                                             m_dialogs.join(QStringLiteral(", "))));
    QCOMPARE(setup->configJsonText().toStdString(), config);
    QVERIFY2(!setup->isModified(), qPrintable(where));
    // Some page scrolled in place of a value (the Setup panels are taller than 1024x640).
    if (page == window.setupPage()) QVERIFY2(scrolled > 0, qPrintable(where));
  }

  // Focused, every input of a field takes the wheel; turned back, the configuration is as it
  // was.
  void wheelOverFocusedFields(MainWindow& window, const QString& where) {
    SetupPage* setup = window.setupPage();
    const std::string config = setup->configJsonText().toStdString();
    int changed = 0;
    for (QWidget* input : inputsOf(setup)) {
      const bool field = qobject_cast<tb::app::ConfigFieldEditor*>(input->parentWidget()) ||
                         qobject_cast<tb::widgets::LayerStackEditor*>(input->parentWidget());
      if (!field || !input->isVisible() || !bringIntoView(input)) continue;
      auto* combo = qobject_cast<QComboBox*>(input);
      auto* spin = qobject_cast<QSpinBox*>(input);
      if ((combo != nullptr && combo->count() < 2) ||
          (spin != nullptr && spin->minimum() == spin->maximum()))
        continue;
      input->setFocus(Qt::MouseFocusReason);
      QVERIFY(input->hasFocus());
      const QString before = shown(input);
      int notches = 1;
      turnWheel(input, input->rect().center(), notches);
      if (shown(input) == before) {  // at the top of its range
        notches = -1;
        QVERIFY(bringIntoView(input));
        turnWheel(input, input->rect().center(), notches);
      }
      QVERIFY2(
          shown(input) != before,
          qPrintable(
              QStringLiteral("%1 on %2 ignored the wheel with focus").arg(describe(input), where)));
      QVERIFY(bringIntoView(input));
      turnWheel(input, input->rect().center(), -notches);
      QVERIFY2(shown(input) == before,
               qPrintable(QStringLiteral("%1 on %2 turned back: %3 -> %4")
                              .arg(describe(input), where, before, shown(input))));
      ++changed;
    }
    qInfo("%s: %d inputs took the wheel with focus", qPrintable(where), changed);
    QVERIFY2(changed > 0, qPrintable(where));
    QCOMPARE(setup->configJsonText().toStdString(), config);
    QVERIFY(!setup->isModified());  // values put back are no edits
  }

 private Q_SLOTS:
  void initTestCase() {
    // A wheel that changed the preset chooser would open a dialog: closed, and reported.
    connect(&m_dialogWatch, &QTimer::timeout, this, [this] {
      if (auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget())) {
        m_dialogs << dialog->windowTitle();
        dialog->reject();
      }
    });
    m_dialogWatch.start(20);
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_settingsDir.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_settingsDir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
  }

  void wheelOverEveryFieldOfEveryPage_data() {
    QTest::addColumn<QString>("preset");
    QTest::newRow("magvit2") << QStringLiteral("magvit2-readme");
    QTest::newRow("vqgan") << QStringLiteral("vqgan-f8");
  }

  void wheelOverEveryFieldOfEveryPage() {
    QFETCH(QString, preset);
    MainWindow window;
    window.setRemembersWindowState(false);
    QVERIFY(window.setupPage()->applyPreset(preset));
    QVERIFY(window.openRunDirectory(QStringLiteral(TB_MONITOR_RUN_DIR)));
    window.resize(1024, 640);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));

    SetupPage* setup = window.setupPage();
    int wheeled = 0;
    window.setCurrentPage(PageId::Setup);
    // The layer editor's argument shows for a layer that takes one.
    if (tb::widgets::LayerStackEditor* layers = setup->layerEditor()) {
      const std::vector<tb::core::LayerSpec> specs = layers->layers();
      for (int row = 0; row < static_cast<int>(specs.size()); ++row) {
        if (specs[static_cast<std::size_t>(row)].name == "consecutive_residual")
          layers->setCurrentRow(row);
      }
    }
    for (auto panel : {SetupPage::Panel::Dataset, SetupPage::Panel::Model,
                       SetupPage::Panel::Training, SetupPage::Panel::Distributed}) {
      setup->showPanel(panel);
      QTest::qWait(20);
      wheelOverUnfocused(window, setup,
                         QStringLiteral("Setup panel %1").arg(static_cast<int>(panel)), &wheeled);
      wheelOverFocusedFields(window, QStringLiteral("Setup panel %1").arg(static_cast<int>(panel)));
    }
    qInfo("%d inputs wheeled over without focus on Setup", wheeled);
    // The layer stack editor's argument (MAGVIT-v2) and the combo boxes are among them.
    auto* argument = setup->layerEditor()->findChild<QSpinBox*>();
    QVERIFY(argument != nullptr);
    QVERIFY2(m_wheeled.contains(argument) || !setup->layerEditor()->isVisible(),
             "the layer argument was not wheeled over");
    QVERIFY(m_wheeled.contains(setup->fieldEditor(QStringLiteral("data.type"))->input()));
    QVERIFY2(wheeled > 30, qPrintable(QString::number(wheeled)));
    for (PageId page : {PageId::Monitor, PageId::Samples, PageId::Compare, PageId::Runs}) {
      window.setCurrentPage(page);
      QTest::qWait(20);
      int onPage = 0;
      wheelOverUnfocused(window, window.pageWidget(page),
                         QString::fromLatin1(tb::app::pageName(page).data()), &onPage);
      qInfo("%s: %d inputs wheeled over without focus", tb::app::pageName(page).data(), onPage);
    }
  }

 private:
  QTemporaryDir m_settingsDir;
  QList<QWidget*> m_wheeled;  // inputs wheeled over without focus
  QTimer m_dialogWatch;
  QStringList m_dialogs;  // titles of the dialogs that opened
};

QTEST_MAIN(WheelPolicyTest)
#include "test_wheel_policy.moc"
