// HeadlessRunner: input checks that name the option, and an honest "not yet".
#include "app/headless_runner.h"

#include <QDir>
#include <QFile>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

#include <sstream>

using tb::app::HeadlessRunner;

class TestHeadlessRunner : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_config = m_dir.filePath(QStringLiteral("config.json")).toStdString();
    QFile config(QString::fromStdString(m_config));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write("{}\n");
    m_runDir = m_dir.filePath(QStringLiteral("run")).toStdString();
    QVERIFY(QDir().mkpath(QString::fromStdString(m_runDir)));
  }

  void badInputsNameTheOption_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("runDir");
    QTest::addColumn<bool>("resume");
    QTest::addColumn<QString>("named");
    const QString config = QString::fromStdString(m_config);
    const QString runDir = QString::fromStdString(m_runDir);
    const QString missing = m_dir.filePath(QStringLiteral("missing"));
    QTest::newRow("nothing") << QString() << QString() << false << "--run-dir";
    QTest::newRow("no run dir") << config << QString() << false << "--run-dir";
    QTest::newRow("no config") << QString() << runDir << false << "--config";
    QTest::newRow("config missing") << missing << runDir << false << "--config: no such file";
    QTest::newRow("config is a directory") << runDir << runDir << false << "--config";
    QTest::newRow("resume a missing run") << QString() << missing << true << "--run-dir";
    QTest::newRow("run dir is a file") << config << config << false << "--run-dir";
  }

  void badInputsNameTheOption() {
    QFETCH(QString, config);
    QFETCH(QString, runDir);
    QFETCH(bool, resume);
    QFETCH(QString, named);
    const HeadlessRunner runner({config.toStdString(), runDir.toStdString(), resume});
    const QString problem = QString::fromStdString(runner.validate());
    QVERIFY2(problem.contains(named), qPrintable("expected '" + named + "', got: " + problem));

    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(out, err), 2);
    QVERIFY(QString::fromStdString(err.str()).contains(named));
    QVERIFY(out.str().empty());
  }

  void goodInputsAreAccepted_data() {
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("runDir");
    QTest::addColumn<bool>("resume");
    const QString config = QString::fromStdString(m_config);
    const QString runDir = QString::fromStdString(m_runDir);
    QTest::newRow("new run in existing dir") << config << runDir << false;
    QTest::newRow("new run in new dir") << config << m_dir.filePath(QStringLiteral("new")) << false;
    QTest::newRow("resume") << QString() << runDir << true;
  }

  void goodInputsAreAccepted() {
    QFETCH(QString, config);
    QFETCH(QString, runDir);
    QFETCH(bool, resume);
    const HeadlessRunner runner({config.toStdString(), runDir.toStdString(), resume});
    QCOMPARE(QString::fromStdString(runner.validate()), QString());
  }

  void validInputsDoNotPretendToTrain() {
    const HeadlessRunner runner({m_config, m_runDir, false});
    std::ostringstream out;
    std::ostringstream err;
    QCOMPARE(runner.run(out, err), 2);
    QVERIFY(out.str().empty());
    QVERIFY2(QString::fromStdString(err.str()).contains(QLatin1String("nothing was run")),
             err.str().c_str());
    QVERIFY(!QFile::exists(QString::fromStdString(m_runDir) + QStringLiteral("/config.json")));
  }

 private:
  QTemporaryDir m_dir;
  std::string m_config;
  std::string m_runDir;
};

QTEST_GUILESS_MAIN(TestHeadlessRunner)
#include "test_headless_runner.moc"
