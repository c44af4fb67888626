// The Setup page's verdict on its settings, offscreen: the status line follows the trainer's
// data check to its end, a folder of the other data type is named with the fix, a perceptual
// loss without LPIPS weights is a warning before launch, fields that differ from the preset are
// marked, and "Discard your changes?" comes only when something would be lost.
#include "app/control/run_controller.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/setup/setup_page.h"
#include "app/gui/pages/setup/trainer_checks.h"
#include "app/gui/run_control_bar.h"
#include "app/gui/window_settings.h"
#include "tests/app/gui_test_support.h"

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

using tb::app::MainWindow;
using tb::app::SetupPage;
using Json = nlohmann::ordered_json;

namespace {

using tb::app::testing::clickButton;
using tb::app::testing::onNextDialog;
using tb::app::testing::trainerAt;
using tb::app::testing::writeFile;
using tb::app::testing::writeScript;

constexpr int kTimeoutMs = 30000;

// data-info's answer for a folder of 12 videos.
const char* const kDataInfo =
    R"({"type":"videos","path":"/data/clips","files":12,"train_files":11,"valid_files":1,)"
    R"("train_clips":11,"valid_clips":1,"frames":{"min":48,"max":300,"total":1620},)"
    R"("resolutions":[{"width":640,"height":360,"files":12}],"skipped":[],"preview":[]})";

// Watches for a "Discard your changes?" question while alive: each is answered `answer` and
// counted.
class DiscardQuestions : public QObject {
 public:
  explicit DiscardQuestions(const QString& answer) : m_answer(answer) {
    m_poll.setInterval(10);
    QObject::connect(&m_poll, &QTimer::timeout, this, [this] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (box == nullptr || box->objectName() != QLatin1String("discardEditsBox")) return;
      ++m_count;
      clickButton(box, m_answer);
    });
    m_poll.start();
  }
  int count() const { return m_count; }

 private:
  QString m_answer;
  QTimer m_poll;
  int m_count = 0;
};

// Types `text` into the line edit of the field at `path`, as a user does.
void typeInto(SetupPage& page, const QString& path, const QString& text) {
  auto* edit = qobject_cast<QLineEdit*>(page.fieldEditor(path)->input());
  QVERIFY(edit != nullptr);
  edit->setFocus();
  edit->selectAll();
  QTest::keyClicks(edit, text);
}

QString summaryOf(const SetupPage& page) { return page.validationSummaryText(); }

}  // namespace

class SetupChecksTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, m_dir.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.path());
  }

  // Item 5: the status line says the data check's outcome once it ends, with no other edit.
  void statusLineFollowsTheDataCheckToItsEnd() {
    const QString script =
        writeScript(m_dir, QStringLiteral("slow-data-info"),
                    "cat > /dev/null\nif [ \"$1\" = data-info ]; then sleep 0.6; cat <<'EOF'\n" +
                        QByteArray(kDataInfo) + "\nEOF\nelse echo '{}'; fi\n");
    SetupPage page;
    page.setRunDirectory(m_dir.filePath(QStringLiteral("runs/status")));
    page.dataInfoQuery()->setDebounceInterval(10);
    page.modelInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    QTRY_VERIFY(page.dataInfoQuery()->startedCount() == 1);
    // An edit while the data is being checked (one that does not check it again).
    page.setValue(QStringLiteral("train.lr"), 0.0002);
    QVERIFY2(summaryOf(page).contains(QLatin1String("being checked")), qPrintable(summaryOf(page)));
    QTRY_VERIFY_WITH_TIMEOUT(!page.dataInfoQuery()->isBusy(), kTimeoutMs);
    QTRY_VERIFY2(!summaryOf(page).contains(QLatin1String("being checked")),
                 qPrintable(summaryOf(page)));
    QVERIFY2(summaryOf(page).contains(QLatin1String("the data was checked (12 files, 11 training "
                                                    "clips)")),
             qPrintable(summaryOf(page)));
    QVERIFY(summaryOf(page).contains(QLatin1String("can be launched")));
    QCOMPARE(page.dataInfoQuery()->startedCount(), 1);
  }

  // Item 14: a folder of videos given as images (and the other way round) says so, with the
  // fix; a folder of neither says what it looks for.
  void folderOfTheOtherTypeIsNamed() {
    const QString videos = m_dir.filePath(QStringLiteral("clips"));
    for (const char* name : {"a.mp4", "b.MOV", "sub/c.webm", ".hidden.mp4", "notes.txt"})
      QVERIFY(writeFile(videos + QLatin1Char('/') + QLatin1String(name), "x"));
    const QString images = m_dir.filePath(QStringLiteral("stills"));
    for (const char* name : {"a.png", "b.jpg"})
      QVERIFY(writeFile(images + QLatin1Char('/') + QLatin1String(name), "x"));
    const QString empty = m_dir.filePath(QStringLiteral("nothing"));
    QVERIFY(QDir().mkpath(empty));
    // As the trainer fails when it finds no file of data.type in data.path.
    const QString script = writeScript(
        m_dir, QStringLiteral("empty-data-info"),
        "cat > /dev/null\nif [ \"$1\" = data-info ]; then echo 'tokenbench-trainer data-info: "
        "data.path: no files found' >&2; exit 2; else echo '{}'; fi\n");
    SetupPage page;
    page.dataInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    QVERIFY(page.applyPreset(QStringLiteral("vqgan-f8")));
    const auto problemAbout = [&page](const QString& type, const QString& path) {
      page.setValue(QStringLiteral("data.type"), type.toStdString());
      page.setValue(QStringLiteral("data.path"), path.toStdString());
      const bool ended = QTest::qWaitFor(
          [&page] {
            return page.dataInfoView()->state() == tb::app::DataInfoView::State::Failed &&
                   !summaryOf(page).contains(QLatin1String("being checked"));
          },
          kTimeoutMs);
      if (!ended) return QStringLiteral("(no end to the data check)");
      for (const QString& problem : page.validationErrors())
        if (problem.startsWith(QLatin1String("data.path: "))) return problem;
      return QString();
    };
    QCOMPARE(problemAbout(QStringLiteral("images"), videos),
             QStringLiteral("data.path: no image files in %1, but 3 video files: set Type to "
                            "videos")
                 .arg(videos));
    QVERIFY(page.dataInfoView()->statusText().contains(QLatin1String("set Type to videos")));
    QCOMPARE(problemAbout(QStringLiteral("videos"), images),
             QStringLiteral("data.path: no video files in %1, but 2 image files: set Type to "
                            "images")
                 .arg(images));
    QCOMPARE(
        problemAbout(QStringLiteral("images"), empty),
        QStringLiteral("data.path: no image files (.jpg .jpeg .png .webp .bmp) in %1").arg(empty));
    // Files of the right type there: the trainer's own reason stands.
    QCOMPARE(problemAbout(QStringLiteral("videos"), videos),
             QStringLiteral("data.path: tokenbench-trainer data-info: data.path: no files found"));
  }

  // Item 13: one usable video gave the split "1 (1 / 0)" with no word: no validation clip is a
  // warning before launch, naming what a run would miss.
  void noValidationClipIsAWarning() {
    const QString videos = m_dir.filePath(QStringLiteral("one-video"));
    QVERIFY(QDir().mkpath(videos));
    const QByteArray info = "{\"version\":1,\"type\":\"videos\",\"path\":\"" + videos.toUtf8() +
                            "\",\"files\":1,\"train_files\":1,\"valid_files\":0,\"train_clips\":9,"
                            "\"valid_clips\":0,\"frames\":{\"min\":40,\"max\":40,\"total\":40},"
                            "\"resolutions\":[],\"skipped\":[]}";
    const QString script = writeScript(m_dir, QStringLiteral("one-file-data-info"),
                                       "cat > /dev/null\nif [ \"$1\" = data-info ]; then echo '" +
                                           info + "'; else echo '{}'; fi\n");
    SetupPage page;
    page.dataInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    QVERIFY(page.applyPreset(QStringLiteral("quick-start")));
    page.setValue(QStringLiteral("data.path"), videos.toStdString());
    const bool ready = QTest::qWaitFor(
        [&page] { return page.dataInfoView()->state() == tb::app::DataInfoView::State::Ready; },
        kTimeoutMs);
    QVERIFY2(ready, qPrintable(page.dataInfoView()->statusText()));
    const QStringList warnings = page.warnings();
    const auto held = std::find_if(warnings.begin(), warnings.end(), [](const QString& w) {
      return w.startsWith(QLatin1String("data.valid_path: no validation clips"));
    });
    QVERIFY2(held != warnings.end(), qPrintable(warnings.join('\n')));
    QVERIFY(held->contains(QLatin1String("its only usable file leaves none")));
    QVERIFY(page.problemListText().contains(*held));
    QVERIFY(page.validationErrors().isEmpty() ||
            !page.validationErrors().join('\n').contains(QLatin1String("validation clips")));
  }

  // Item 14: perceptual loss on, LPIPS weights not set: a warning before launch.
  void perceptualLossWithoutWeightsIsAWarning() {
    SetupPage page;
    QVERIFY(page.applyPreset(QStringLiteral("vqgan-f8")));
    QVERIFY(page.value(QStringLiteral("loss.perceptual_weight")).get<double>() > 0);
    QCOMPARE(page.warnings().size(), 1);
    const QString warning = page.warnings().front();
    QVERIFY2(warning.startsWith(QLatin1String("loss.lpips_backbone: ")), qPrintable(warning));
    QVERIFY2(warning.contains(QLatin1String("without the perceptual loss")), qPrintable(warning));
    QVERIFY(page.problemListText().contains(warning));
    QVERIFY(!page.validationErrors().join('\n').contains(QLatin1String("lpips")));  // no refusal
    QVERIFY2(summaryOf(page).contains(QLatin1String("(1 warning below)")),
             qPrintable(summaryOf(page)));
    // Listed under the panels; clicking it goes to the field.
    auto* list = page.findChild<QListWidget*>(QStringLiteral("problemList"));
    QVERIFY(list->isVisibleTo(&page));
    QListWidgetItem* item = list->findItems(warning, Qt::MatchExactly).value(0);
    QVERIFY(item != nullptr);
    Q_EMIT list->itemClicked(item);
    QCOMPARE(page.currentPanel(), SetupPage::Panel::Training);

    page.setValue(QStringLiteral("loss.lpips_backbone"), "/weights/vgg.pth");
    QCOMPARE(page.warnings().size(), 1);
    QVERIFY(page.warnings().front().startsWith(QLatin1String("loss.lpips_lin: ")));
    page.setValue(QStringLiteral("loss.lpips_lin"), "/weights/vgg_lin.pth");
    QVERIFY(page.warnings().isEmpty());
    page.setValue(QStringLiteral("loss.lpips_lin"), "");
    QCOMPARE(page.warnings().size(), 1);
    page.setValue(QStringLiteral("loss.perceptual_weight"), 0);
    QVERIFY(page.warnings().isEmpty());
    QVERIFY(!page.problemListText().join('\n').contains(QLatin1String("perceptual")));
  }

  // Item 16: values put back by hand are no edits: no question, no "modified", no marks.
  void valuesPutBackAreNoEdits() {
    MainWindow window;
    window.setRemembersWindowState(false);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    SetupPage* page = window.setupPage();
    QCOMPARE(page->presetName(), QStringLiteral("demo"));
    page->showPanel(SetupPage::Panel::Training);
    const QString lr = QString::fromStdString(page->value(QStringLiteral("train.lr")).dump());
    typeInto(*page, QStringLiteral("train.lr"), QStringLiteral("0.002"));
    QVERIFY(page->isModified());
    QVERIFY(page->configText().contains(QLatin1String("modified")));
    QVERIFY(page->isMarkedChanged(QStringLiteral("train.lr")));
    QVERIFY(!page->isMarkedChanged(QStringLiteral("train.batch_size")));
    typeInto(*page, QStringLiteral("train.lr"), lr);
    QVERIFY(!page->isModified());
    QVERIFY(!page->configText().contains(QLatin1String("modified")));
    QVERIFY(!page->isMarkedChanged(QStringLiteral("train.lr")));

    DiscardQuestions questions(QStringLiteral("Cancel"));
    auto* presets = page->findChild<QComboBox*>(QStringLiteral("presetBox"));
    presets->setFocus();
    onNextDialog([](QWidget* dialog) {  // quick-start asks for footage: none
      if (qobject_cast<QFileDialog*>(dialog) != nullptr) qobject_cast<QDialog*>(dialog)->reject();
    });
    QTest::keyClick(presets, Qt::Key_Down);
    QCOMPARE(questions.count(), 0);
    QCOMPARE(page->presetName(), QStringLiteral("quick-start"));

    // A real edit is still asked about.
    typeInto(*page, QStringLiteral("train.lr"), QStringLiteral("0.003"));
    presets->setFocus();
    QTest::keyClick(presets, Qt::Key_Up);
    QCOMPARE(questions.count(), 1);
    QCOMPARE(page->presetName(), QStringLiteral("quick-start"));  // Cancel kept it
  }

  // Item 16: right after a launch, the settings launched are kept (in their .config.json):
  // leaving them asks nothing; an edit after the launch is asked about.
  void launchedSettingsAreNotAskedAbout() {
    qputenv("TB_FAKE_MODE", "normal");
    MainWindow window;
    window.setRemembersWindowState(false);
    window.setTrainerLocation(trainerAt(QStringLiteral(TB_FAKE_TRAINER)));
    SetupPage* page = window.setupPage();
    page->dataInfoQuery()->setDebounceInterval(10);
    page->setRunDirectory(m_dir.filePath(QStringLiteral("runs/launched")));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_VERIFY_WITH_TIMEOUT(!page->dataInfoQuery()->isBusy(), kTimeoutMs);
    page->showPanel(SetupPage::Panel::Training);
    typeInto(*page, QStringLiteral("train.lr"), QStringLiteral("0.002"));
    QVERIFY(page->isModified());
    QVERIFY2(page->validationErrors().isEmpty(), qPrintable(page->validationErrors().join('\n')));

    QTest::mouseClick(window.runControlBar()->launchButton(), Qt::LeftButton);
    QVERIFY(window.runController()->isActive());
    QSignalSpy finished(window.runController(), &tb::app::RunController::finished);
    QVERIFY(!window.runController()->isActive() || finished.wait(kTimeoutMs));

    DiscardQuestions questions(QStringLiteral("Cancel"));
    QVERIFY(page->confirmDiscardEdits(QStringLiteral("Test")));
    QCOMPARE(questions.count(), 0);
    window.setCurrentPage(tb::app::PageId::Setup);
    page->showPanel(SetupPage::Panel::Training);
    typeInto(*page, QStringLiteral("train.lr"), QStringLiteral("0.004"));
    QVERIFY(!page->confirmDiscardEdits(QStringLiteral("Test")));
    QCOMPARE(questions.count(), 1);
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(SetupChecksTest)
#include "test_setup_checks.moc"
