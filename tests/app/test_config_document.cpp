// ConfigDocument headless (QtCore, no widgets): load, typed view, edits with the changed
// signal, validation errors that name the field, the atomic save round trip, and files that
// are missing, malformed, not an object or a FIFO (each error names the file).
#include "app/control/config_document.h"
#include "tests/app/json_compare.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/types.h>

using tb::app::ConfigDocument;
using Json = nlohmann::ordered_json;

namespace {

void writeBytes(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(file.write(bytes), bytes.size());
}

QByteArray readBytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class ConfigDocumentTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() { QVERIFY(m_dir.isValid()); }

  void startsFromCoreDefaults() {
    const ConfigDocument document;
    JSON_COMPARE(document.json(), tb::core::toJson(tb::core::RunConfig{}));
    QCOMPARE(document.config().train.max_steps, tb::core::RunConfig{}.train.max_steps);
    QVERIFY(document.file().isEmpty());
  }

  void loadsAPartialFileOverDefaults() {
    const QString file = m_dir.filePath(QStringLiteral("config.json"));
    writeBytes(file, R"({"train": {"max_steps": 77}, "loss": {"adversarial_weight": 0.5}})");
    ConfigDocument document;
    QSignalSpy changed(&document, &ConfigDocument::changed);
    QVERIFY2(document.load(file), qPrintable(document.loadError()));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toString(), QString());
    QCOMPARE(document.config().train.max_steps, 77);
    QCOMPARE(document.config().loss.adversarial_weight, 0.5);
    // Keys the file lacks hold core's defaults, in the typed view and in the document.
    QCOMPARE(document.config().model.quantizer.codebook_size,
             tb::core::RunConfig{}.model.quantizer.codebook_size);
    JSON_COMPARE(document.value(QStringLiteral("train.batch_size")),
                 Json(tb::core::RunConfig{}.train.batch_size));
    QCOMPARE(document.file(), file);
    QVERIFY(document.loadError().isEmpty());
  }

  void editsRevalidateAndNameTheField() {
    ConfigDocument document;
    QSignalSpy changed(&document, &ConfigDocument::changed);
    document.setValue(QStringLiteral("train.lr"), 0.002);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).toString(), QStringLiteral("train.lr"));
    QCOMPARE(document.config().train.lr, 0.002);
    QVERIFY(document.errorTexts(QStringLiteral("train.lr")).isEmpty());

    document.setValue(QStringLiteral("train.batch_size"), 0);
    const QStringList errors = document.errorTexts(QStringLiteral("train.batch_size"));
    QCOMPARE(errors.size(), 1);
    QVERIFY2(errors.front().startsWith(QStringLiteral("train.batch_size: ")),
             qPrintable(errors.front()));
    QVERIFY(!document.isValid());
    QVERIFY(document.errorTexts().contains(errors.front()));
    // Only errors about the key (or its parts) are its own.
    QVERIFY(document.errorTexts(QStringLiteral("train.batch")).isEmpty());

    // A wrong type and an unknown key are named too.
    document.setValue(QStringLiteral("train.max_steps"), "many");
    QCOMPARE(document.errorTexts(QStringLiteral("train.max_steps")).size(), 1);
    document.setValue(QStringLiteral("train.max_stepz"), 5);
    QCOMPARE(document.errorTexts(QStringLiteral("train.max_stepz")).size(), 1);

    document.setValue(QStringLiteral("train.batch_size"), 4);
    QVERIFY(document.errorTexts(QStringLiteral("train.batch_size")).isEmpty());
    QCOMPARE(document.config().train.batch_size, 4);
  }

  void savesAtomicallyAndReadsBack() {
    ConfigDocument document;
    document.setValue(QStringLiteral("train.max_steps"), 1234);
    document.setValue(QStringLiteral("notes"), "kept");  // unknown keys survive a save
    const QTemporaryDir folder;
    const QString file = folder.filePath(QStringLiteral("saved.json"));
    QString error;
    QVERIFY2(document.save(file, &error), qPrintable(error));
    QCOMPARE(readBytes(file), document.text().toUtf8());
    QVERIFY(readBytes(file).endsWith("}\n"));
    // No temporary is left beside it.
    QCOMPARE(QDir(folder.path()).entryList(QDir::Files | QDir::Hidden),
             QStringList{QStringLiteral("saved.json")});

    ConfigDocument reread;
    QVERIFY2(reread.load(file), qPrintable(reread.loadError()));
    JSON_COMPARE(reread.json(), document.json());
    QCOMPARE(reread.config().train.max_steps, 1234);
    JSON_COMPARE(reread.value(QStringLiteral("notes")), Json("kept"));

    // A folder that does not exist: refused, with the file named; nothing else changes.
    const QString nowhere = folder.filePath(QStringLiteral("no-such-dir/x.json"));
    QVERIFY(!document.save(nowhere, &error));
    QVERIFY2(error.startsWith(QStringLiteral("cannot write ") + nowhere), qPrintable(error));
    QVERIFY(!QFile::exists(nowhere));
  }

  void refusesBadFilesNamingThem() {
    ConfigDocument document;
    document.setValue(QStringLiteral("train.max_steps"), 55);
    const Json before = document.json();
    QSignalSpy changed(&document, &ConfigDocument::changed);

    const QString missing = m_dir.filePath(QStringLiteral("missing.json"));
    QVERIFY(!document.load(missing));
    QVERIFY2(document.loadError().startsWith(QStringLiteral("cannot read ") + missing + ": "),
             qPrintable(document.loadError()));

    const QString malformed = m_dir.filePath(QStringLiteral("malformed.json"));
    writeBytes(malformed, "{\"train\": {\"lr\": }");
    QVERIFY(!document.load(malformed));
    QVERIFY2(document.loadError().startsWith(malformed + QStringLiteral(": invalid JSON")),
             qPrintable(document.loadError()));

    const QString list = m_dir.filePath(QStringLiteral("list.json"));
    writeBytes(list, "[1, 2]");
    QVERIFY(!document.load(list));
    QCOMPARE(document.loadError(), list + QStringLiteral(" holds no JSON object"));

    // A FIFO nobody writes would block the open: refused before it.
    const QString fifo = m_dir.filePath(QStringLiteral("fifo.json"));
    QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
    QVERIFY(!document.load(fifo));
    QCOMPARE(document.loadError(),
             QStringLiteral("cannot read ") + fifo + QStringLiteral(": it is a named pipe"));

    // The document is as it was, and nobody was told it changed.
    JSON_COMPARE(document.json(), before);
    QCOMPARE(document.config().train.max_steps, 55);
    QCOMPARE(changed.count(), 0);
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(ConfigDocumentTest)
#include "test_config_document.moc"
