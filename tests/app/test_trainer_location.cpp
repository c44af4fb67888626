// TrainerLocation: search order, and explicit choices that are reported, not replaced.
#include "app/control/trainer_location.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QTemporaryDir>
#include <QTest>

namespace {

// Writes an (executable, if asked) file at `path`, creating its directory.
void writeFile(const QString& path, bool executable) {
  QVERIFY(QDir().mkpath(QFileInfo(path).absolutePath()));
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("#!/bin/sh\nexit 0\n");
  file.close();
  QFile::Permissions permissions = QFile::ReadOwner | QFile::WriteOwner;
  if (executable) {
    permissions |= QFile::ExeOwner;
  }
  QVERIFY(file.setPermissions(permissions));
}

}  // namespace

class TestTrainerLocation : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() { QVERIFY(m_dir.isValid()); }

  void foundBesideTokenbench() {
    const QString bin = m_dir.filePath(QStringLiteral("beside/bin"));
    writeFile(bin + QStringLiteral("/tokenbench-trainer"), true);
    const auto location = tb::app::TrainerLocation::find({}, {}, bin);
    QVERIFY2(location.found(), qPrintable(location.problem));
    QCOMPARE(location.path, bin + QStringLiteral("/tokenbench-trainer"));
    QCOMPARE(location.origin, QStringLiteral("beside tokenbench"));
  }

  void foundInTheInstalledLayout() {
    const QString prefix = m_dir.filePath(QStringLiteral("prefix"));
    const QString bin = prefix + QStringLiteral("/bin");
    QVERIFY(QDir().mkpath(bin));
    const QString trainer =
        QDir::cleanPath(bin + QStringLiteral("/" TB_TRAINER_RELATIVE_DIR "/tokenbench-trainer"));
    writeFile(trainer, true);
    const auto location = tb::app::TrainerLocation::find({}, {}, bin);
    QVERIFY2(location.found(), qPrintable(location.problem));
    QCOMPARE(location.path, trainer);
    QCOMPARE(location.origin, QStringLiteral("installed layout"));
  }

  void notFoundSaysWhereItLooked() {
    const QString empty = m_dir.filePath(QStringLiteral("empty"));
    QVERIFY(QDir().mkpath(empty));
    const auto location = tb::app::TrainerLocation::find({}, {}, empty);
    QVERIFY(!location.found());
    QVERIFY(!location.explicitChoiceInvalid);
    QVERIFY2(location.problem.contains(empty), qPrintable(location.problem));
    QVERIFY(location.problem.contains(QLatin1String("TOKENBENCH_TRAINER")));
  }

  void optionWinsOverEnvironmentAndBeside() {
    const QString bin = m_dir.filePath(QStringLiteral("order/bin"));
    writeFile(bin + QStringLiteral("/tokenbench-trainer"), true);
    const QString fromEnv = m_dir.filePath(QStringLiteral("order/env-trainer"));
    const QString fromOption = m_dir.filePath(QStringLiteral("order/option-trainer"));
    writeFile(fromEnv, true);
    writeFile(fromOption, true);
    QCOMPARE(tb::app::TrainerLocation::find(fromOption, fromEnv, bin).path, fromOption);
    QCOMPARE(tb::app::TrainerLocation::find({}, fromEnv, bin).path, fromEnv);
    QCOMPARE(tb::app::TrainerLocation::find({}, fromEnv, bin).origin,
             QStringLiteral("TOKENBENCH_TRAINER"));
  }

  void unusableOptionIsReportedNotReplaced() {
    const QString bin = m_dir.filePath(QStringLiteral("bad/bin"));
    writeFile(bin + QStringLiteral("/tokenbench-trainer"), true);
    const QString notExecutable = m_dir.filePath(QStringLiteral("bad/plain-file"));
    writeFile(notExecutable, false);
    for (const QString& bad : {notExecutable, m_dir.filePath(QStringLiteral("bad/missing")), bin}) {
      const auto location = tb::app::TrainerLocation::find(bad, {}, bin);
      QVERIFY2(!location.found(), qPrintable(bad));
      QVERIFY(location.explicitChoiceInvalid);
      QVERIFY2(location.problem.startsWith(QLatin1String("--trainer:")),
               qPrintable(location.problem));
      QVERIFY(location.problem.contains(bad));
    }
  }

  void unusableEnvironmentIsReportedButNotFatal() {
    const QString bin = m_dir.filePath(QStringLiteral("env/bin"));
    writeFile(bin + QStringLiteral("/tokenbench-trainer"), true);
    const QString missing = m_dir.filePath(QStringLiteral("env/missing"));
    const auto location = tb::app::TrainerLocation::find({}, missing, bin);
    QVERIFY(!location.found());  // an explicit choice is never silently replaced
    QVERIFY(!location.explicitChoiceInvalid);
    QVERIFY(location.problem.startsWith(QLatin1String("TOKENBENCH_TRAINER:")));
  }

 private:
  QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestTrainerLocation)
#include "test_trainer_location.moc"
