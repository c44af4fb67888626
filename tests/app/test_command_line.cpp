// CommandLine: every option, and every bad value named in the error.
#include "app/control/command_line.h"
#include "app/control/page_id.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTest>

#include <string>
#include <vector>

using tb::app::CommandLine;
using tb::app::CommandLineOptions;
using tb::app::PageId;

namespace {

CommandLine::Result parse(const QStringList& arguments) {
  std::vector<std::string> args;
  for (const QString& argument : arguments) {
    args.push_back(argument.toStdString());
  }
  return CommandLine::parse(args);
}

// The option's value as text, so one data table can check options of every type.
QString field(const CommandLineOptions& o, const QString& name) {
  auto flag = [](bool on) { return on ? QStringLiteral("true") : QStringLiteral("false"); };
  if (name == QLatin1String("help")) return flag(o.help);
  if (name == QLatin1String("version")) return flag(o.version);
  if (name == QLatin1String("noGui")) return flag(o.noGui);
  if (name == QLatin1String("resume")) return flag(o.resume);
  if (name == QLatin1String("configPath")) return QString::fromStdString(o.configPath);
  if (name == QLatin1String("runDir")) return QString::fromStdString(o.runDir);
  if (name == QLatin1String("screenshotPath")) return QString::fromStdString(o.screenshotPath);
  if (name == QLatin1String("trainerPath")) return QString::fromStdString(o.trainerPath);
  if (name == QLatin1String("timeBudget")) return QString::fromStdString(o.timeBudget);
  if (name == QLatin1String("compare")) return flag(o.compare);
  const tb::core::CompareCommand& c = o.compareCommand;
  if (name == QLatin1String("compareCheckpoints")) {
    QStringList entries;
    for (const auto& [entry, path] : c.entries)
      entries << QString::fromStdString(entry + "=" + path);
    return entries.join(QLatin1Char(','));
  }
  if (name == QLatin1String("compareOut")) return QString::fromStdString(c.out_dir);
  if (name == QLatin1String("compareData")) return QString::fromStdString(c.data_dir);
  if (name == QLatin1String("compareClips")) return QString::number(c.clips);
  if (name == QLatin1String("page")) {
    return o.page ? QString::fromUtf8(tb::app::pageName(*o.page).data()) : QStringLiteral("-");
  }
  return QStringLiteral("<unknown field %1>").arg(name);
}

}  // namespace

class TestCommandLine : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void noArgumentsMeansWindowWithDefaults() {
    const CommandLine::Result result = parse({});
    QVERIFY2(result.ok(), result.error.c_str());
    const CommandLineOptions& o = result.options;
    QVERIFY(!o.help && !o.version && !o.noGui && !o.resume);
    QVERIFY(o.configPath.empty() && o.runDir.empty() && o.screenshotPath.empty());
    QVERIFY(o.trainerPath.empty());
    QVERIFY(!o.page.has_value());
  }

  void eachOptionIsParsed_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--help") << QStringList{"--help"} << "help"
                            << "true";
    QTest::newRow("-h") << QStringList{"-h"} << "help"
                        << "true";
    QTest::newRow("--version") << QStringList{"--version"} << "version"
                               << "true";
    QTest::newRow("--no-gui") << QStringList{"--no-gui"} << "noGui"
                              << "true";
    QTest::newRow("--no-gui --help") << QStringList{"--no-gui", "--help"} << "help"
                                     << "true";
    QTest::newRow("--config") << QStringList{"--config", "a/run.json"} << "configPath"
                              << "a/run.json";
    QTest::newRow("--config=") << QStringList{"--config=b.json"} << "configPath"
                               << "b.json";
    QTest::newRow("--run-dir") << QStringList{"--run-dir", "/runs/x"} << "runDir"
                               << "/runs/x";
    QTest::newRow("--resume") << QStringList{"--run-dir", "r", "--resume"} << "resume"
                              << "true";
    QTest::newRow("--screenshot") << QStringList{"--screenshot", "out/shot.png"} << "screenshotPath"
                                  << "out/shot.png";
    QTest::newRow("--screenshot .PNG")
        << QStringList{"--screenshot", "SHOT.PNG"} << "screenshotPath"
        << "SHOT.PNG";
    QTest::newRow("--trainer") << QStringList{"--trainer", "/opt/tokenbench-trainer"}
                               << "trainerPath"
                               << "/opt/tokenbench-trainer";
    QTest::newRow("--time-budget") << QStringList{"--time-budget", "20m"} << "timeBudget"
                                   << "20m";
    const QStringList compare{"--no-gui",     "--compare", "--checkpoint", "a=/c/a",
                              "--checkpoint", "b=/r/b",    "--out",        "/o",
                              "--data",       "/d",        "--clips",      "7"};
    QTest::newRow("--compare") << compare << "compare"
                               << "true";
    QTest::newRow("--checkpoint twice") << compare << "compareCheckpoints"
                                        << "a=/c/a,b=/r/b";
    QTest::newRow("--out") << compare << "compareOut"
                           << "/o";
    QTest::newRow("--data") << compare << "compareData"
                            << "/d";
    QTest::newRow("--clips") << compare << "compareClips"
                             << "7";
    for (PageId page : tb::app::kAllPages) {
      const QString name = QString::fromUtf8(tb::app::pageName(page).data());
      QTest::newRow(qPrintable("--page " + name)) << QStringList{"--page", name} << "page" << name;
    }
    QTest::newRow("all together") << QStringList{"--config", "c.json", "--run-dir", "r",
                                                 "--page",   "runs",   "--trainer", "t"}
                                  << "page"
                                  << "runs";
  }

  void eachOptionIsParsed() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, field);
    QFETCH(QString, expected);
    const CommandLine::Result result = parse(arguments);
    QVERIFY2(result.ok(), result.error.c_str());
    QCOMPARE(::field(result.options, field), expected);
  }

  void badUsageNamesTheOption_data() {
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("named");
    QTest::newRow("unknown option") << QStringList{"--bogus"} << "--bogus";
    QTest::newRow("unknown short option") << QStringList{"-x"} << "-x";
    QTest::newRow("stray argument") << QStringList{"stray"} << "stray";
    QTest::newRow("unknown page") << QStringList{"--page", "bogus"} << "--page";
    QTest::newRow("page is case-sensitive") << QStringList{"--page", "Monitor"} << "--page";
    QTest::newRow("empty page") << QStringList{"--page="} << "--page";
    QTest::newRow("page without value") << QStringList{"--page"} << "--page";
    QTest::newRow("config without value") << QStringList{"--config"} << "--config";
    QTest::newRow("config given twice")
        << QStringList{"--config", "a", "--config", "b"} << "--config";
    QTest::newRow("empty config") << QStringList{"--config", ""} << "--config";
    QTest::newRow("run-dir without value") << QStringList{"--run-dir"} << "--run-dir";
    QTest::newRow("empty run-dir") << QStringList{"--run-dir="} << "--run-dir";
    QTest::newRow("trainer without value") << QStringList{"--trainer"} << "--trainer";
    QTest::newRow("screenshot without value") << QStringList{"--screenshot"} << "--screenshot";
    QTest::newRow("screenshot not png") << QStringList{"--screenshot", "x.jpg"} << "--screenshot";
    QTest::newRow("screenshot with --no-gui")
        << QStringList{"--no-gui", "--screenshot", "x.png"} << "--screenshot";
    QTest::newRow("page with --no-gui") << QStringList{"--no-gui", "--page", "setup"} << "--page";
    QTest::newRow("resume without run-dir") << QStringList{"--resume"} << "--resume";
    QTest::newRow("flag with a value") << QStringList{"--no-gui=yes"} << "--no-gui";
    const QStringList compare{"--no-gui", "--compare", "--checkpoint", "a=/x", "--out", "/o"};
    QTest::newRow("checkpoint without --compare")
        << QStringList{"--no-gui", "--checkpoint", "a=/x"} << "--checkpoint";
    QTest::newRow("compare without --no-gui") << compare.mid(1) << "--no-gui";
    QTest::newRow("compare without checkpoint")
        << QStringList{"--no-gui", "--compare", "--out", "/o"} << "--checkpoint";
    QTest::newRow("checkpoint without name")
        << QStringList{"--no-gui", "--compare", "--checkpoint", "/x", "--out", "/o"}
        << "--checkpoint \"/x\": expected NAME=PATH";
    QTest::newRow("checkpoint named like the originals")
        << QStringList{"--no-gui", "--compare", "--checkpoint", "original=/x", "--out", "/o"}
        << "--checkpoint \"original=/x\": NAME must be";
    QTest::newRow("checkpoint with empty path")
        << QStringList{"--no-gui", "--compare", "--checkpoint", "a=", "--out", "/o"}
        << "--checkpoint";
    QTest::newRow("compare without out")
        << QStringList{"--no-gui", "--compare", "--checkpoint", "a=/x"} << "--out";
    QTest::newRow("compare with config")
        << compare + QStringList{"--config", "c.json"} << "--config";
    QTest::newRow("clips zero") << compare + QStringList{"--clips", "0"} << "--clips";
    QTest::newRow("data type bogus")
        << compare + QStringList{"--data", "/d", "--data-type", "gifs"} << "--data-type";
    QTest::newRow("data type without data")
        << compare + QStringList{"--data-type", "images"} << "--data-type";
    QTest::newRow("one lpips file")
        << compare + QStringList{"--lpips-lin", "l.pt"} << "--lpips-backbone";
    QTest::newRow("compare with a value") << QStringList{"--compare=1"} << "--compare";
  }

  void badUsageNamesTheOption() {
    QFETCH(QStringList, arguments);
    QFETCH(QString, named);
    const CommandLine::Result result = parse(arguments);
    QVERIFY2(!result.ok(), "parse accepted bad usage");
    const QString error = QString::fromStdString(result.error);
    QVERIFY2(error.contains(named), qPrintable("error does not name " + named + ": " + error));
    QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable("error is not one line: " + error));
  }

  void unknownPageListsThePages() {
    const QString error = QString::fromStdString(parse({"--page", "bogus"}).error);
    for (PageId page : tb::app::kAllPages) {
      QVERIFY2(error.contains(QString::fromUtf8(tb::app::pageName(page).data())),
               qPrintable(error));
    }
  }

  void usageListsEveryOption() {
    const QString usage = QString::fromStdString(CommandLine::usage());
    const QStringList options = {"--help",        "--version", "--no-gui",     "--config",
                                 "--run-dir",     "--resume",  "--page",       "--screenshot",
                                 "--trainer",     "--compare", "--checkpoint", "--out",
                                 "--time-budget", "--clips",   "--data",       "--lpips-net"};
    for (const QString& option : options) {
      QVERIFY2(usage.contains(option), qPrintable(option + " missing from usage:\n" + usage));
    }
    QVERIFY(usage.contains(QLatin1String("Usage: tokenbench")));
    QVERIFY(usage.contains(QLatin1String("TOKENBENCH_TRAINER")));
  }

  void argvSkipsTheProgramName() {
    const char* argv[] = {"tokenbench", "--page", "compare", "--no-gui"};
    const CommandLine::Result withNoGui = CommandLine::parse(4, argv);
    QVERIFY(!withNoGui.ok());  // --page with --no-gui
    const CommandLine::Result result = CommandLine::parse(3, argv);
    QVERIFY2(result.ok(), result.error.c_str());
    QCOMPARE(result.options.page, std::optional<PageId>(PageId::Compare));
  }

  void pageNamesRoundTrip() {
    QCOMPARE(tb::app::kAllPages.size(), size_t{5});
    for (PageId page : tb::app::kAllPages) {
      QCOMPARE(tb::app::pageFromName(tb::app::pageName(page)), std::optional<PageId>(page));
    }
    QVERIFY(!tb::app::pageFromName("").has_value());
    QCOMPARE(tb::app::pageNameList(), std::string("setup, monitor, samples, compare or runs"));
  }
};

QTEST_GUILESS_MAIN(TestCommandLine)
#include "test_command_line.moc"
