// The Setup page, offscreen: generated forms against the schema, validation marks and the
// problem list, JSON load/save, presets, the layer editor's effect on the document, the exact
// command line, and model-info / data-info answers from stand-in trainer scripts (small shell
// scripts that print fixed JSON or fail, the way the real trainer does). Also writes a
// screenshot of each panel at 1280x800 for people to look at.

#include "app/control/launch_request.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/main_window.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "app/gui/pages/setup/setup_page.h"
#include "core/config_io.h"
#include "core/config_schema.h"
#include "core/presets.h"
#include "tests/app/gui_test_support.h"
#include "tests/app/json_compare.h"
#include "widgets/layer_stack_editor.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QGroupBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolButton>

using tb::app::ConfigFieldEditor;
using tb::app::SetupPage;
using Json = nlohmann::ordered_json;

namespace {

using tb::app::testing::trainerAt;
using tb::app::testing::writeFile;
using tb::app::testing::writeScript;

// model-info's answer for the default configuration, as the real trainer printed it.
const char* const kModelInfo = R"({"kind":"magvit2","params":{"tokenizer":1355795,
"encoder":701043,"decoder":652054,"quantizer":2698,"discriminator":14125909},
"input_shape":[3,5,32,32],"token_grid":[3,16,16],"tokens_per_clip":768,"bits_per_token":8.0,
"compression_ratio":16.0,"forward_flops_per_clip":3406823424.0,"batch_size":4,
"peak_training_memory_bytes":308803200})";

QByteArray readFile(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Answers the next modal dialog with `answer` (reject or accept) as soon as it opens.
void answerNextDialog(void (QDialog::*answer)()) {
  auto* poll = new QTimer;
  poll->setInterval(20);
  QObject::connect(poll, &QTimer::timeout, [poll, answer] {
    if (auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget())) {
      (dialog->*answer)();
      poll->deleteLater();
    }
  });
  poll->start();
}

// Pixels of `image` within a small distance of the error red.
int redPixels(const QImage& image) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - 0xc6) < 40 && c.green() < 90 && c.blue() < 90) ++count;
    }
  }
  return count;
}

QLineEdit* lineEditOf(ConfigFieldEditor* editor) {
  return qobject_cast<QLineEdit*>(editor->input());
}

// A preview strip like data-info writes: `frames` frames of `side` pixels, left to right.
QString writeStrip(const QTemporaryDir& dir, const QString& name, int frames, int side, int hue) {
  QImage strip(frames * side, side, QImage::Format_RGB32);
  QPainter painter(&strip);
  for (int f = 0; f < frames; ++f) {
    QLinearGradient gradient(f * side, 0, (f + 1) * side, side);
    gradient.setColorAt(0, QColor::fromHsv(hue, 200, 120 + 12 * f));
    gradient.setColorAt(1, QColor::fromHsv((hue + 40) % 360, 160, 230));
    painter.fillRect(f * side, 0, side, side, gradient);
    painter.setBrush(QColor::fromHsv((hue + 180) % 360, 220, 240));
    painter.setPen(Qt::NoPen);
    painter.drawEllipse(QPointF(f * side + side * (0.25 + 0.06 * f), side * 0.5), side * 0.18,
                        side * 0.18);
  }
  painter.end();
  const QString path = dir.filePath(name);
  return strip.save(path) ? path : QString();
}

}  // namespace

class SetupPageTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void generatedFormHasAnEditorForEverySchemaKey() {
    SetupPage page;
    const std::vector<tb::core::FieldInfo> schema = tb::core::configSchema();
    const QStringList special = SetupPage::specialKeys();
    QCOMPARE(page.fieldEditors().size(), static_cast<qsizetype>(schema.size()) - special.size());
    auto* tabs = page.findChild<QTabWidget*>(QStringLiteral("setupTabs"));
    QVERIFY(tabs != nullptr);
    QCOMPARE(tabs->count(), 4);
    for (const tb::core::FieldInfo& field : schema) {
      const QString path = QString::fromStdString(field.path);
      ConfigFieldEditor* editor = page.fieldEditor(path);
      if (special.contains(path)) {
        QVERIFY2(editor == nullptr, qPrintable(path));
        continue;
      }
      QVERIFY2(editor != nullptr, qPrintable(path));
      // Each sits in a group box on one of the four panels, with the widget its type asks for.
      auto* group = qobject_cast<QGroupBox*>(editor->parentWidget());
      QVERIFY2(group != nullptr, qPrintable(path));
      bool onAPanel = false;
      for (int i = 0; i < tabs->count(); ++i) onAPanel |= tabs->widget(i)->isAncestorOf(editor);
      QVERIFY2(onAPanel, qPrintable(path));
      switch (field.type) {
        case tb::core::FieldType::Bool:
          QVERIFY2(qobject_cast<QCheckBox*>(editor->input()), qPrintable(path));
          break;
        case tb::core::FieldType::Int: {
          auto* spin = qobject_cast<QSpinBox*>(editor->input());
          QVERIFY2(spin != nullptr, qPrintable(path));
          // The arrows stop at the key's range (typing may go past it, to be marked).
          const QSignalBlocker quiet(spin);
          const int shown = spin->value();
          if (field.spec.minValue()) {
            spin->setValue(int(*field.spec.minValue()));
            spin->stepBy(-1);
            QCOMPARE(spin->value(), int(*field.spec.minValue()));
          }
          if (field.spec.maxValue()) {
            spin->setValue(int(*field.spec.maxValue()));
            spin->stepBy(1);
            QCOMPARE(spin->value(), int(*field.spec.maxValue()));
          }
          spin->setValue(shown);
          break;
        }
        case tb::core::FieldType::String:
          if (!field.spec.allowed().empty()) {
            auto* combo = qobject_cast<QComboBox*>(editor->input());
            QVERIFY2(combo != nullptr, qPrintable(path));
            QCOMPARE(combo->count(), static_cast<int>(field.spec.allowed().size()));
          } else {
            QVERIFY2(lineEditOf(editor) != nullptr, qPrintable(path));
          }
          break;
        default:
          break;
      }
      QVERIFY2(editor->toolTip().contains(QString::fromStdString(field.spec.doc()).toHtmlEscaped()),
               qPrintable(path));
    }
    // The layer list has its own editor on the Model panel.
    QVERIFY(
        tabs->widget(static_cast<int>(SetupPage::Panel::Model))->isAncestorOf(page.layerEditor()));
    // Labels carry the unit.
    QCOMPARE(page.fieldEditor(QStringLiteral("data.image_size"))->labelText(),
             QStringLiteral("Image size (pixels)"));
    QCOMPARE(page.fieldEditor(QStringLiteral("train.lr"))->labelText(),
             QStringLiteral("Learning rate"));
    QCOMPARE(page.fieldEditor(QStringLiteral("distributed.bucket_mb"))->labelText(),
             QStringLiteral("Bucket (MiB)"));
  }

  void startsFromTheFirstPresetAndSwitchesPresets() {
    SetupPage page;
    const QString first = QString::fromStdString(tb::core::presets().front().name);
    QCOMPARE(page.presetName(), first);
    JSON_COMPARE(page.configJsonText().toStdString(),
                 tb::core::toJsonText(tb::core::loadPreset(first.toStdString()).config));
    QVERIFY(page.runDirectory().section(QLatin1Char('/'), -1).startsWith(first + QLatin1Char('-')));

    QSignalSpy changed(&page, &SetupPage::configChanged);
    auto* presetBox = page.findChild<QComboBox*>(QStringLiteral("presetBox"));
    const int vqgan = presetBox->findData(QStringLiteral("vqgan-f16"));
    QVERIFY(vqgan >= 0);
    presetBox->setCurrentIndex(vqgan);
    // vqgan-f16 is meant for your own images: the page asks for their folder (not now).
    answerNextDialog(&QDialog::reject);
    Q_EMIT presetBox->activated(vqgan);  // what choosing it with the mouse emits
    QVERIFY(changed.count() >= 1);
    QVERIFY2(page.lastMessage().contains(QLatin1String("procedural")),
             qPrintable(page.lastMessage()));
    QCOMPARE(page.presetName(), QStringLiteral("vqgan-f16"));
    JSON_COMPARE(page.value(QStringLiteral("model.kind")), Json("vqgan"));
    auto* kind = qobject_cast<QComboBox*>(page.fieldEditor(QStringLiteral("model.kind"))->input());
    QCOMPARE(kind->currentText(), QStringLiteral("vqgan"));
    JSON_COMPARE(page.value(QStringLiteral("model.quantizer.codebook_size")), Json(16384));
    auto* size = qobject_cast<QSpinBox*>(
        page.fieldEditor(QStringLiteral("model.quantizer.codebook_size"))->input());
    QCOMPARE(size->value(), 16384);
    // VQGAN settings shown, the MAGVIT-v2 layer stack not.
    QVERIFY(!page.findChild<QGroupBox*>(QStringLiteral("group:VQGAN architecture"))->isHidden());
    QVERIFY(page.findChild<QGroupBox*>(QStringLiteral("group:MAGVIT-v2 architecture"))->isHidden());
    QVERIFY(
        page.runDirectory().section(QLatin1Char('/'), -1).startsWith(QStringLiteral("vqgan-f16-")));

    QVERIFY(page.applyPreset(QStringLiteral("demo")));
    JSON_COMPARE(page.value(QStringLiteral("data.image_size")), Json(32));
    QCOMPARE(qobject_cast<QSpinBox*>(page.fieldEditor(QStringLiteral("data.image_size"))->input())
                 ->value(),
             32);
    QVERIFY(page.findChild<QGroupBox*>(QStringLiteral("group:VQGAN architecture"))->isHidden());
    QVERIFY(!page.applyPreset(QStringLiteral("no-such-preset")));
    QVERIFY(page.lastMessage().contains(QStringLiteral("no-such-preset")));
    QCOMPARE(page.presetName(), QStringLiteral("demo"));
  }

  void keysOtherKeysSwitchOffAreGreyedOut() {
    SetupPage page;
    QVERIFY(page.applyPreset(QStringLiteral("demo")));  // synthetic data, no GAN, no LPIPS
    QVERIFY(!page.fieldEditor(QStringLiteral("data.path"))->isEnabled());
    QVERIFY(page.fieldEditor(QStringLiteral("data.synthetic_clips"))->isEnabled());
    QVERIFY(!page.fieldEditor(QStringLiteral("loss.lpips_backbone"))->isEnabled());
    QVERIFY(!page.fieldEditor(QStringLiteral("loss.r1_weight"))->isEnabled());
    page.setValue(QStringLiteral("data.type"), "videos");
    QVERIFY(page.fieldEditor(QStringLiteral("data.path"))->isEnabled());
    QVERIFY(!page.fieldEditor(QStringLiteral("data.synthetic_clips"))->isEnabled());
    page.setValue(QStringLiteral("loss.adversarial_weight"), 0.1);
    QVERIFY(page.fieldEditor(QStringLiteral("loss.r1_weight"))->isEnabled());
    // A greyed-out key with a problem stays editable.
    page.setValue(QStringLiteral("loss.lpips_lin"), 5);
    QVERIFY(page.fieldEditor(QStringLiteral("loss.lpips_lin"))->hasError());
    QVERIFY(page.fieldEditor(QStringLiteral("loss.lpips_lin"))->isEnabled());
  }

  void badValueIsMarkedListedAndFocusable() {
    SetupPage page;
    page.resize(1280, 800);
    page.setRunDirectory(m_dir.filePath(QStringLiteral("runs/run-a")));
    page.show();
    QVERIFY(QTest::qWaitForWindowActive(&page));
    QVERIFY(page.validationErrors().isEmpty());
    auto* summary = page.findChild<QLabel*>(QStringLiteral("validationSummary"));
    QVERIFY(summary->text().contains(QStringLiteral("No problems")));

    ConfigFieldEditor* lr = page.fieldEditor(QStringLiteral("train.lr"));
    QCOMPARE(redPixels(lr->grab().toImage()), 0);
    QSignalSpy changed(&page, &SetupPage::configChanged);
    page.showPanel(SetupPage::Panel::Training);
    QLineEdit* text = lineEditOf(lr);
    text->selectAll();
    QTest::keyClicks(text, QStringLiteral("0"));
    QVERIFY(changed.count() >= 1);
    JSON_COMPARE(page.value(QStringLiteral("train.lr")), Json(0.0));
    QVERIFY(lr->hasError());
    QCOMPARE(lr->error(), QStringLiteral("must be > 0, got 0"));
    QVERIFY(lr->toolTip().contains(QStringLiteral("must be &gt; 0, got 0")));
    QCOMPARE(page.validationErrors(), QStringList{QStringLiteral("train.lr: must be > 0, got 0")});
    QCOMPARE(page.problemListText(), QStringList{QStringLiteral("train.lr: must be > 0, got 0")});
    QVERIFY(summary->text().contains(QStringLiteral("1 problem")));
    QVERIFY2(redPixels(lr->grab().toImage()) > 40, "no red outline drawn around train.lr");

    // Text that is not a number goes to the document as written, and core says so.
    text->selectAll();
    QTest::keyClicks(text, QStringLiteral("fast"));
    QCOMPARE(page.validationErrors(),
             QStringList{QStringLiteral("train.lr: expected a number, got string \"fast\"")});

    // A rule between keys: 4 frames cannot pass one compress_time layer.
    auto* frames =
        qobject_cast<QSpinBox*>(page.fieldEditor(QStringLiteral("data.num_frames"))->input());
    frames->setValue(4);
    QCOMPARE(page.validationErrors().size(), 2);
    QVERIFY(page.fieldEditor(QStringLiteral("data.num_frames"))->hasError());

    // Clicking a problem opens its panel and focuses its field.
    page.showPanel(SetupPage::Panel::Distributed);
    auto* problems = page.findChild<QListWidget*>(QStringLiteral("problemList"));
    QListWidgetItem* item =
        problems->findItems(QStringLiteral("data.num_frames"), Qt::MatchStartsWith).value(0);
    QVERIFY(item != nullptr);
    QTest::mouseClick(problems->viewport(), Qt::LeftButton, {},
                      problems->visualItemRect(item).center());
    QCOMPARE(page.currentPanel(), SetupPage::Panel::Dataset);
    QTRY_VERIFY(frames->hasFocus());

    // Fixing both clears the marks and the list.
    frames->setValue(5);
    text->selectAll();
    QTest::keyClicks(text, QStringLiteral("2e-4"));
    JSON_COMPARE(page.value(QStringLiteral("train.lr")), Json(2e-4));
    QVERIFY(page.validationErrors().isEmpty());
    QVERIFY(!lr->hasError());
    QCOMPARE(redPixels(lr->grab().toImage()), 0);
    QVERIFY(problems->isHidden());
  }

  void layerEditorEditsTheDocument() {
    SetupPage page;
    QVERIFY(page.applyPreset(QStringLiteral("demo")));
    tb::widgets::LayerStackEditor* layers = page.layerEditor();
    JSON_COMPARE(
        page.value(QStringLiteral("model.layers")),
        Json::parse(R"(["residual","compress_space","residual","compress_time","residual"])"));
    QSignalSpy changed(&page, &SetupPage::configChanged);

    layers->setCurrentRow(0);
    layers->addLayer(QStringLiteral("attend_space"));
    layers->setCurrentRow(4);
    layers->moveCurrentLayer(-1);  // compress_time above the residual before it
    layers->setCurrentRow(1);
    layers->addLayer(QStringLiteral("consecutive_residual"));
    QCOMPARE(changed.count(), 3);
    JSON_COMPARE(
        page.value(QStringLiteral("model.layers")),
        Json::parse(R"(["residual","attend_space",["consecutive_residual",1],"compress_space",
                             "compress_time","residual","residual"])"));
    layers->setCurrentRow(1);
    layers->removeCurrentLayer();
    JSON_COMPARE(
        page.value(QStringLiteral("model.layers")),
        Json::parse(R"(["residual",["consecutive_residual",1],"compress_space","compress_time",
                             "residual","residual"])"));
    QVERIFY(page.validationErrors().isEmpty());

    // Two compress_time layers take the demo's 5 frames (1 + 4k); a third needs 1 + 8k, and
    // core validation marks data.num_frames.
    layers->setCurrentRow(5);
    layers->addLayer(QStringLiteral("compress_time"));
    QVERIFY(page.validationErrors().isEmpty());
    layers->addLayer(QStringLiteral("compress_time"));
    QVERIFY(page.validationErrors().join('\n').contains(QStringLiteral("data.num_frames")));
    QVERIFY(page.fieldEditor(QStringLiteral("data.num_frames"))->hasError());

    // A bad layer in a loaded document marks its row in the editor.
    Json doc = page.configDocument();
    doc["model"]["layers"] = Json::parse(R"(["residual","bogus","compress_space"])");
    const QString file = m_dir.filePath(QStringLiteral("bad-layer.json"));
    QVERIFY(writeFile(file, QByteArray::fromStdString(doc.dump(2))));
    QVERIFY(page.loadConfigFile(file));
    QCOMPARE(layers->errorRows(), QList<int>{1});
    QVERIFY(page.validationErrors().join('\n').contains(
        QStringLiteral("model.layers[1]: unknown layer")));
  }

  void loadAndSaveRoundTrip() {
    SetupPage page;
    // A complete file comes back byte for byte.
    const std::string complete =
        tb::core::toJsonText(tb::core::loadPreset("magvit2-readme").config);
    const QString in = m_dir.filePath(QStringLiteral("complete.json"));
    QVERIFY(writeFile(in, QByteArray::fromStdString(complete)));
    QVERIFY(page.loadConfigFile(in));
    QVERIFY(page.presetName().isEmpty());
    QVERIFY(page.configText().contains(in));
    JSON_COMPARE(page.value(QStringLiteral("data.image_size")), Json(128));
    QCOMPARE(page.layerEditor()->layerCount(), 14);
    const QString out = m_dir.filePath(QStringLiteral("saved.json"));
    QVERIFY(page.saveConfigFile(out));
    QCOMPARE(readFile(out), QByteArray::fromStdString(complete));

    // A partial file: its keys, defaults elsewhere; saved complete and equal as JSON.
    const QString partial = m_dir.filePath(QStringLiteral("partial.json"));
    QVERIFY(writeFile(partial,
                      R"({"train": {"lr": 0.002, "max_steps": 50}, "data": {"num_frames": 9}})"));
    QVERIFY(page.loadConfigFile(partial));
    QCOMPARE(lineEditOf(page.fieldEditor(QStringLiteral("train.lr")))->text(),
             QStringLiteral("0.002"));
    QCOMPARE(qobject_cast<QSpinBox*>(page.fieldEditor(QStringLiteral("train.max_steps"))->input())
                 ->value(),
             50);
    QVERIFY(page.saveConfigFile(out));
    Json expected = tb::core::toJson(tb::core::RunConfig{});
    expected["train"]["lr"] = 0.002;
    expected["train"]["max_steps"] = 50;
    expected["data"]["num_frames"] = 9;
    JSON_COMPARE(Json::parse(readFile(out).toStdString()), expected);

    // Edits are saved; after saving, the source is the saved file, not modified.
    page.setValue(QStringLiteral("train.batch_size"), 7);
    QVERIFY(page.configText().contains(QStringLiteral("modified")));
    QVERIFY(page.saveConfigFile(out));
    QVERIFY(!page.configText().contains(QStringLiteral("modified")));
    JSON_COMPARE(Json::parse(readFile(out).toStdString())["train"]["batch_size"], Json(7));

    // Broken files are refused and leave the document alone.
    const QString before = page.configJsonText();
    const QString broken = m_dir.filePath(QStringLiteral("broken.json"));
    QVERIFY(writeFile(broken, "{\"train\": {\"lr\": }"));
    QVERIFY(!page.loadConfigFile(broken));
    QVERIFY(page.lastMessage().contains(QStringLiteral("invalid JSON")));
    // 100,000 levels deep crashed the trainer reading it; the window refuses it unparsed.
    const QString deep = m_dir.filePath(QStringLiteral("deep.json"));
    QVERIFY(writeFile(
        deep, "{\"train\": {\"lr\": " + QByteArray(100000, '[') + QByteArray(100000, ']') + "}}"));
    QVERIFY(!page.loadConfigFile(deep));
    QVERIFY2(page.lastMessage().contains(QStringLiteral("JSON nested deeper than 64 levels")),
             qPrintable(page.lastMessage()));
    QVERIFY(!page.loadConfigFile(m_dir.filePath(QStringLiteral("missing.json"))));
    QVERIFY2(page.lastMessage().startsWith(QStringLiteral("Not loaded: cannot read ")),
             qPrintable(page.lastMessage()));
    QCOMPARE(page.configJsonText(), before);
    QVERIFY(!page.saveConfigFile(QStringLiteral("/nonexistent-dir/x.json")));

    // Unknown keys load, are listed, and are kept on save.
    const QString unknown = m_dir.filePath(QStringLiteral("unknown.json"));
    QVERIFY(writeFile(unknown, R"({"train": {"learning_rate": 0.1}})"));
    QVERIFY(page.loadConfigFile(unknown));
    QVERIFY(page.validationErrors().join('\n').contains(
        QStringLiteral("train.learning_rate: unknown key")));
    QVERIFY(page.configJsonText().contains(QStringLiteral("learning_rate")));

    // MainWindow's --config path loads too.
    page.setConfigPath(in);
    JSON_COMPARE(page.configJsonText().toStdString(), complete);
  }

  void commandLineIsTheLaunchRequest() {
    SetupPage page;
    const QString trainer = QStringLiteral("/opt/tokenbench/bin/tokenbench-trainer");
    tb::app::TrainerLocation location = trainerAt(trainer);
    page.setTrainerLocation(location);
    const QString runs = m_dir.filePath(QStringLiteral("my runs"));
    page.setRunDirectory(runs + QStringLiteral("/exp-1"));
    page.showPanel(SetupPage::Panel::Distributed);

    tb::app::LaunchRequest expected;
    expected.trainer = trainer;
    expected.setConfigFile(runs + QStringLiteral("/exp-1.config.json"));
    expected.setRunDir(runs + QStringLiteral("/exp-1"));
    expected.command.control_stdin = true;
    auto* commandLine = page.findChild<QPlainTextEdit*>(QStringLiteral("commandLine"));
    QVERIFY(commandLine->isReadOnly());
    QCOMPARE(commandLine->toPlainText(), tb::app::shellCommandLine(expected));
    QVERIFY(commandLine->toPlainText().contains(QStringLiteral("'") + runs));  // quoted space
    QCOMPARE(page.runDirectory(), expected.runDir());
    QCOMPARE(page.runDirectoryText(), expected.runDir());

    // Distributed settings change the note, not the command (they live in the config file).
    page.setValue(QStringLiteral("distributed.strategy"), "ddp");
    page.setValue(QStringLiteral("distributed.nproc_per_node"), 4);
    auto* note = page.findChild<QLabel*>(QStringLiteral("commandNote"));
    QVERIFY(note->text().contains(QStringLiteral("4 rank process")));
    QCOMPARE(commandLine->toPlainText(), tb::app::shellCommandLine(expected));

    auto* copy = page.findChild<QToolButton*>(QStringLiteral("copyCommandButton"));
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QApplication::clipboard()->text(), tb::app::shellCommandLine(expected));

    // The run name follows the user's edits; the file a launch writes is the document.
    auto* runName = page.findChild<QLineEdit*>(QStringLiteral("runName"));
    runName->selectAll();
    QTest::keyClicks(runName, QStringLiteral("exp-2"));
    expected.setRunDir(runs + QStringLiteral("/exp-2"));
    expected.setConfigFile(runs + QStringLiteral("/exp-2.config.json"));
    QCOMPARE(commandLine->toPlainText(), tb::app::shellCommandLine(expected));
    QString error;
    QVERIFY2(page.writeLaunchConfig(&error), qPrintable(error));
    QCOMPARE(QString::fromUtf8(readFile(expected.configFile())), page.configJsonText());

    // A run directory that already holds a run is a problem, as is an empty name.
    QVERIFY(QDir().mkpath(expected.runDir()));
    QVERIFY(writeFile(expected.runDir() + QStringLiteral("/config.json"), "{}"));
    QVERIFY(page.validationErrors().join('\n').contains(QStringLiteral("already holds a run")));
    runName->clear();
    QTest::keyClicks(runName, QStringLiteral(" "));
    QVERIFY(page.validationErrors().join('\n').contains(QStringLiteral("run name is empty")));

    // After a launch the window opens the new run: the page then targets a fresh run beside it.
    runName->selectAll();
    QTest::keyClicks(runName, QStringLiteral("exp-3"));
    page.setRunDirectory(runs + QStringLiteral("/exp-3"));
    QVERIFY(page.runDirectory() != runs + QStringLiteral("/exp-3"));
    QCOMPARE(QFileInfo(page.runDirectory()).path(), runs);
    // Opening an existing run to watch it does not make it the target either.
    page.setRunDirectory(expected.runDir());
    QVERIFY(page.runDirectory() != expected.runDir());
    QVERIFY(page.validationErrors().isEmpty());
  }

  void modelInfoFromTheTrainerIsSummarised() {
    const QString stdinCopy = m_dir.filePath(QStringLiteral("model-info.stdin"));
    const QString script =
        writeScript(m_dir, QStringLiteral("fake-model-info"),
                    QByteArray("[ \"$1\" = model-info ] || exit 3\ncat > '") + stdinCopy.toUtf8() +
                        "'\ncat <<'EOF'\n" + kModelInfo + "\nEOF\n");
    SetupPage page;
    page.modelInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    tb::app::ModelInfoView* view = page.modelInfoView();
    QCOMPARE(view->state(), tb::app::ModelInfoView::State::Computing);
    QVERIFY(view->statusText().contains(QStringLiteral("computing")));
    QTRY_COMPARE(view->state(), tb::app::ModelInfoView::State::Ready);
    QCOMPARE(view->valueText(QStringLiteral("tokenizer")), QStringLiteral("1.36 M"));
    QCOMPARE(view->valueText(QStringLiteral("encoder")), QStringLiteral("701 k"));
    QCOMPARE(view->valueText(QStringLiteral("discriminator")), QStringLiteral("14.1 M"));
    QCOMPARE(view->valueText(QStringLiteral("token_grid")),
             QStringLiteral("3 \u00d7 16 \u00d7 16"));
    QCOMPARE(view->valueText(QStringLiteral("tokens_per_clip")), QStringLiteral("768"));
    QCOMPARE(view->valueText(QStringLiteral("compression_ratio")), QStringLiteral("16 \u00d7"));
    QCOMPARE(view->valueText(QStringLiteral("forward_flops_per_clip")),
             QStringLiteral("3.41 GFLOP"));
    QCOMPARE(view->valueText(QStringLiteral("peak_training_memory_bytes")),
             QStringLiteral("294.5 MiB (batch 4)"));
    // The trainer read the page's model on stdin.
    const Json sent = Json::parse(readFile(stdinCopy).toStdString());
    JSON_COMPARE(sent["model"], page.configDocument()["model"]);

    // An edit asks again; the same document does not.
    const int started = page.modelInfoQuery()->startedCount();
    page.setValue(QStringLiteral("model.init_dim"), 24);
    QCOMPARE(view->state(), tb::app::ModelInfoView::State::Computing);
    QTRY_COMPARE(view->state(), tb::app::ModelInfoView::State::Ready);
    QCOMPARE(page.modelInfoQuery()->startedCount(), started + 1);
    JSON_COMPARE(Json::parse(readFile(stdinCopy).toStdString())["model"]["init_dim"], Json(24));
    page.setValue(QStringLiteral("distributed.master_port"), 29600);  // not part of the model
    QTest::qWait(60);
    QCOMPARE(page.modelInfoQuery()->startedCount(), started + 1);
  }

  void modelInfoErrorIsShownInline() {
    const QString script =
        writeScript(m_dir, QStringLiteral("fake-model-info-fails"),
                    "cat > /dev/null\necho 'model.layers[0]: unknown layer \"bogus\"' >&2\n"
                    "echo '<stdin>: 1 error' >&2\nexit 2\n");
    SetupPage page;
    page.modelInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    tb::app::ModelInfoView* view = page.modelInfoView();
    QTRY_COMPARE(view->state(), tb::app::ModelInfoView::State::Failed);
    QVERIFY(
        view->statusText().contains(QStringLiteral("model.layers[0]: unknown layer \"bogus\"")));
    auto* status = view->findChild<QLabel*>(QStringLiteral("modelInfoStatus"));
    QVERIFY(status->isVisibleTo(view));
    QCOMPARE(status->palette().color(QPalette::WindowText), QColor(0xc6, 0x28, 0x28));

    // No trainer at all: said plainly, nothing started.
    tb::app::TrainerLocation none;
    none.problem = QStringLiteral("tokenbench-trainer not found in /nowhere");
    page.setTrainerLocation(none);
    QCOMPARE(view->state(), tb::app::ModelInfoView::State::Empty);
    QVERIFY(view->statusText().contains(QStringLiteral("/nowhere")));
    QVERIFY(page.trainerText().contains(QStringLiteral("/nowhere")));
  }

  void dataInfoShowsCountsSkippedFilesAndPreview() {
    const QString first = writeStrip(m_dir, QStringLiteral("preview_0.png"), 5, 32, 200);
    const QString second = writeStrip(m_dir, QStringLiteral("preview_1.png"), 5, 32, 20);
    QVERIFY(!first.isEmpty() && !second.isEmpty());
    Json info = Json::parse(
        R"({"type":"videos","path":"/data/clips","files":12,"train_files":11,"valid_files":1,
"train_clips":11,"valid_clips":1,"frames":{"min":48,"max":300,"total":1620},
"resolutions":[{"width":640,"height":360,"files":9},{"width":1280,"height":720,"files":3}],
"skipped":[{"path":"/data/clips/broken.mp4","reason":"no video stream"}]})");
    info["preview"] =
        Json::array({{{"source", "/data/clips/a.mp4"}, {"png", first.toStdString()}},
                     {{"source", "/data/clips/b.mp4"}, {"png", second.toStdString()}}});
    const QByteArray json = QByteArray::fromStdString(info.dump());
    const QString argsCopy = m_dir.filePath(QStringLiteral("data-info.args"));
    const QString script =
        writeScript(m_dir, QStringLiteral("fake-data-info"),
                    "if [ \"$1\" = data-info ]; then echo \"$@\" > '" + argsCopy.toUtf8() +
                        "'; cat > /dev/null; cat <<'EOF'\n" + json +
                        "\nEOF\nelse cat > /dev/null; echo nope >&2; exit 2; fi\n");
    SetupPage page;
    page.dataInfoQuery()->setDebounceInterval(10);
    page.setTrainerLocation(trainerAt(script));
    tb::app::DataInfoView* view = page.dataInfoView();
    QTRY_COMPARE(view->state(), tb::app::DataInfoView::State::Ready);
    QCOMPARE(view->valueText(QStringLiteral("files")), QStringLiteral("12  (11 / 1)"));
    QCOMPARE(view->valueText(QStringLiteral("frames")),
             QStringLiteral("48 \u2013 300  (1620 in all)"));
    QCOMPARE(view->resolutionRowCount(), 2);
    QCOMPARE(view->skippedRowCount(), 1);
    QCOMPARE(view->skippedReason(0), QStringLiteral("no video stream"));
    QCOMPARE(view->previewCount(), 2);
    QVERIFY(QString::fromUtf8(readFile(argsCopy)).contains(QStringLiteral("--preview-clips 4")));
    // A model edit does not scan the data again; a dataset edit does.
    int started = page.dataInfoQuery()->startedCount();
    page.setValue(QStringLiteral("model.init_dim"), 24);
    QTest::qWait(60);
    QCOMPARE(page.dataInfoQuery()->startedCount(), started);
    page.setValue(QStringLiteral("data.hflip"), true);
    QTRY_COMPARE(page.dataInfoQuery()->startedCount(), started + 1);
    QTRY_COMPARE(view->state(), tb::app::DataInfoView::State::Ready);
    // A model problem holds the scan back; fixing it scans again.
    page.setValue(QStringLiteral("model.max_dim"), 8);  // below init_dim
    QCOMPARE(view->state(), tb::app::DataInfoView::State::Empty);
    QVERIFY(view->statusText().contains(QStringLiteral("model.max_dim")));
    page.setValue(QStringLiteral("model.max_dim"), 64);
    QTRY_COMPARE(page.dataInfoQuery()->startedCount(), started + 2);
    QTRY_COMPARE(view->state(), tb::app::DataInfoView::State::Ready);

    // A dataset setting that fails validation is not sent to the trainer.
    started = page.dataInfoQuery()->startedCount();
    page.setValue(QStringLiteral("data.type"), "videos");  // with no data.path
    QCOMPARE(view->state(), tb::app::DataInfoView::State::Empty);
    QVERIFY(view->statusText().contains(QStringLiteral("data.path: required")));
    QTest::qWait(60);
    QCOMPARE(page.dataInfoQuery()->startedCount(), started);

    // The trainer's message for a folder it cannot use is shown in place of the results.
    const QString failing =
        writeScript(m_dir, QStringLiteral("fake-data-info-fails"),
                    "cat > /dev/null\necho 'data.path: no such folder: /data/none' >&2\nexit 2\n");
    page.setTrainerLocation(trainerAt(failing));
    page.setValue(QStringLiteral("data.path"), "/data/none");
    QTRY_COMPARE(view->state(), tb::app::DataInfoView::State::Failed);
    QVERIFY(view->statusText().contains(QStringLiteral("no such folder: /data/none")));
  }

  void staleTrainerQueriesAreKilled() {
    // Echoes its stdin; "slow" first sleeps long enough to be overtaken.
    const QString script = writeScript(m_dir, QStringLiteral("fake-echo"),
                                       "read x\n[ \"$x\" = slow ] && sleep 5\necho \"$x\"\n");
    tb::app::TrainerQuery query;
    query.setProgram(script);
    query.setDebounceInterval(0);
    QSignalSpy succeeded(&query, &tb::app::TrainerQuery::succeeded);
    QSignalSpy failed(&query, &tb::app::TrainerQuery::failed);
    query.request({}, "slow\n");
    QTRY_COMPARE(query.startedCount(), 1);
    QTest::qWait(100);  // the slow one is running
    QElapsedTimer clock;
    clock.start();
    query.request({}, "fast\n");
    QTRY_COMPARE(succeeded.count(), 1);
    QVERIFY2(clock.elapsed() < 4000, "waited for the stale command");
    QCOMPARE(succeeded.at(0).at(0).toByteArray(), QByteArray("fast\n"));
    QTest::qWait(100);
    QCOMPARE(succeeded.count(), 1);
    QCOMPARE(failed.count(), 0);
    QVERIFY(!query.isBusy());

    // Debounced: three requests in a row start one command.
    query.setDebounceInterval(50);
    const int before = query.startedCount();
    query.request({}, "a\n");
    query.request({}, "b\n");
    query.request({}, "c\n");
    QTRY_COMPARE(succeeded.count(), 2);
    QCOMPARE(query.startedCount(), before + 1);
    QCOMPARE(succeeded.at(1).at(0).toByteArray(), QByteArray("c\n"));

    // A program that does not exist fails with a message.
    query.setProgram(m_dir.filePath(QStringLiteral("no-such-trainer")));
    query.request({}, {});
    QTRY_COMPARE(failed.count(), 1);
    QVERIFY(failed.at(0).at(0).toString().contains(QStringLiteral("cannot start")));
  }

  // With TB_TEST_TRAINER naming a real tokenbench-trainer (the full build sets it): the page's
  // document goes through the real model-info and data-info.
  void worksWithTheRealTrainer() {
    const QString trainer = qEnvironmentVariable("TB_TEST_TRAINER");
    if (trainer.isEmpty()) QSKIP("TB_TEST_TRAINER is not set");
    SetupPage page;
    QVERIFY(page.applyPreset(QStringLiteral("demo")));
    page.modelInfoQuery()->setDebounceInterval(0);
    page.dataInfoQuery()->setDebounceInterval(0);
    page.setTrainerLocation(trainerAt(trainer));
    tb::app::ModelInfoView* model = page.modelInfoView();
    QTRY_VERIFY_WITH_TIMEOUT(model->state() != tb::app::ModelInfoView::State::Computing, 60000);
    QVERIFY2(model->state() == tb::app::ModelInfoView::State::Ready,
             qPrintable(model->statusText()));
    // demo: 32x32, 5 frames, one compress_space and one compress_time.
    QCOMPARE(model->valueText(QStringLiteral("token_grid")),
             QStringLiteral("3 \u00d7 16 \u00d7 16"));
    QCOMPARE(model->valueText(QStringLiteral("bits_per_token")), QStringLiteral("8"));

    tb::app::DataInfoView* data = page.dataInfoView();
    QTRY_VERIFY_WITH_TIMEOUT(data->state() != tb::app::DataInfoView::State::Computing, 120000);
    QVERIFY2(data->state() == tb::app::DataInfoView::State::Ready, qPrintable(data->statusText()));
    QCOMPARE(data->valueText(QStringLiteral("type")), QStringLiteral("synthetic"));
    QCOMPARE(data->previewCount(), 4);

    // A layer the model cannot build is the trainer's message, shown inline.
    Json layers = page.value(QStringLiteral("model.layers"));
    layers.push_back("bogus");
    page.setValue(QStringLiteral("model.layers"), layers);
    QTRY_VERIFY_WITH_TIMEOUT(model->state() == tb::app::ModelInfoView::State::Failed, 60000);
    QVERIFY2(model->statusText().contains(QStringLiteral("model.layers[5]")),
             qPrintable(model->statusText()));
  }

  void screenshotsOfEveryPanel() {
    const QString stripA = writeStrip(m_dir, QStringLiteral("shot_0.png"), 5, 32, 210);
    const QString stripB = writeStrip(m_dir, QStringLiteral("shot_1.png"), 5, 32, 30);
    const QString stripC = writeStrip(m_dir, QStringLiteral("shot_2.png"), 5, 32, 120);
    Json info = Json::parse(
        R"({"type":"synthetic","path":"","files":512,"train_files":461,"valid_files":51,
"train_clips":461,"valid_clips":51,"frames":{"min":5,"max":5,"total":2560},
"resolutions":[{"width":32,"height":32,"files":512}],"skipped":[]})");
    info["preview"] = Json::array();
    for (const QString& strip : {stripA, stripB, stripC}) {
      info["preview"].push_back(
          {{"source", "synthetic clip " + std::to_string(info["preview"].size())},
           {"png", strip.toStdString()}});
    }
    const QByteArray dataInfo = QByteArray::fromStdString(info.dump());
    const QString script = writeScript(
        m_dir, QStringLiteral("fake-trainer-for-shots"),
        QByteArray("cat > /dev/null\ncase \"$1\" in\nmodel-info) cat <<'EOF'\n") + kModelInfo +
            "\nEOF\n;;\ndata-info) cat <<'EOF'\n" + dataInfo + "\nEOF\n;;\n*) exit 2;;\nesac\n");

    tb::app::MainWindow window;
    window.setRemembersWindowState(false);
    window.resize(1280, 800);
    window.setCurrentPage(tb::app::PageId::Setup);
    SetupPage* page = window.setupPage();
    page->modelInfoQuery()->setDebounceInterval(0);
    page->dataInfoQuery()->setDebounceInterval(0);
    // TB_TEST_TRAINER (a real trainer) gives screenshots of real answers when set.
    const QString real = qEnvironmentVariable("TB_TEST_TRAINER");
    window.setTrainerLocation(trainerAt(real.isEmpty() ? script : real));
    page->setRunDirectory(
        QDir::current().absoluteFilePath(QStringLiteral("runs/demo-20250101-120000")));
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTRY_COMPARE(page->modelInfoView()->state(), tb::app::ModelInfoView::State::Ready);
    QTRY_COMPARE(page->dataInfoView()->state(), tb::app::DataInfoView::State::Ready);

    const QString shots = QStringLiteral(TB_SCREENSHOT_DIR);
    QVERIFY(QDir().mkpath(shots));
    const std::pair<SetupPage::Panel, const char*> panels[] = {
        {SetupPage::Panel::Dataset, "setup-dataset.png"},
        {SetupPage::Panel::Model, "setup-model.png"},
        {SetupPage::Panel::Training, "setup-training.png"},
        {SetupPage::Panel::Distributed, "setup-distributed.png"}};
    for (const auto& [panel, name] : panels) {
      page->showPanel(panel);
      QTest::qWait(30);
      const QImage shot = window.grab().toImage();
      QVERIFY(shot.save(shots + QLatin1Char('/') + QLatin1String(name)));
      // The whole scrolled form too, for reviewing every field at once.
      auto* tabs = page->findChild<QTabWidget*>(QStringLiteral("setupTabs"));
      auto* scroll = qobject_cast<QScrollArea*>(tabs->currentWidget());
      QVERIFY(scroll != nullptr);
      QVERIFY(scroll->widget()->grab().save(
          shots + QLatin1Char('/') +
          QString::fromLatin1(name).replace(QStringLiteral(".png"), QStringLiteral("-full.png"))));
      // The window is 1280x800 unless another page is wider than that at its minimum; the
      // Setup page itself must fit well inside.
      QVERIFY(shot.width() >= 1280 && shot.height() >= 800);
      QVERIFY(page->minimumSizeHint().width() < 1000);
    }
    // The VQGAN preset: VQGAN settings in place of the layer stack.
    QVERIFY(page->applyPreset(QStringLiteral("vqgan-f8")));
    page->showPanel(SetupPage::Panel::Model);
    QTRY_VERIFY_WITH_TIMEOUT(
        page->modelInfoView()->state() != tb::app::ModelInfoView::State::Computing, 60000);
    QVERIFY(window.grab().toImage().save(shots + QStringLiteral("/setup-model-vqgan.png")));
    QVERIFY(page->applyPreset(QStringLiteral("demo")));

    // With problems: a bad learning rate and an impossible frame count, on the Model panel.
    page->setValue(QStringLiteral("train.lr"), 0);
    page->setValue(QStringLiteral("data.num_frames"), 4);
    Json layers = page->value(QStringLiteral("model.layers"));
    layers.push_back("attend_spaces");
    page->setValue(QStringLiteral("model.layers"), layers);
    page->showPanel(SetupPage::Panel::Model);
    QTRY_VERIFY_WITH_TIMEOUT(
        page->modelInfoView()->state() != tb::app::ModelInfoView::State::Computing, 60000);
    QVERIFY(window.grab().toImage().save(shots + QStringLiteral("/setup-problems.png")));
    QCOMPARE(page->validationErrors().size(), 3);
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(SetupPageTest)
#include "test_setup_page.moc"
