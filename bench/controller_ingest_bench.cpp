// tokenbench-controller-bench: how fast RunController ingests a trainer's event stream, and how
// late the event loop gets meanwhile (what a person feels as a frozen window).
//
// The fake trainer (tests/app/fake_trainer.cpp, mode "flood") writes N progress events as fast as
// it can (the stream's live tick; metric rows go to metrics.jsonl, never to the stream). A QTimer
// ticks every --tick-ms on the same thread; every tick records how late it came. Reported per
// scenario: events/s from the first to the last event, and tick lateness (p50, p99, max).
// Scenarios: an idle baseline (no trainer), the bare controller, and the controller with the
// window's run-control bar shown (offscreen unless a display is set), which repaints on every
// progress and protocol change.
//
//   tokenbench-controller-bench [--events N] [--tick-ms T] [--trainer PATH]
#include "app/control/run_controller.h"
#include "app/gui/run_control_bar.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using tb::app::LaunchRequest;
using tb::app::RunControlBar;
using tb::app::RunController;

struct Options {
  long events = 100000;
  int tickMs = 5;
  QString trainer = QStringLiteral(TB_FAKE_TRAINER);
};

struct Lateness {
  double p50 = 0, p99 = 0, max = 0;
  std::size_t ticks = 0;
};

// Ticks every `tickMs` while it lives; lateness = gap between ticks minus the interval.
class TickProbe {
 public:
  explicit TickProbe(int tickMs) : m_tickMs(tickMs) {
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setInterval(tickMs);
    QObject::connect(&m_timer, &QTimer::timeout, [this] {
      const double now = static_cast<double>(m_clock.nsecsElapsed()) / 1e6;
      if (m_last >= 0) m_late.push_back(std::max(0.0, now - m_last - m_tickMs));
      m_last = now;
    });
    m_clock.start();
    m_timer.start();
  }

  Lateness result() {
    m_timer.stop();
    Lateness r;
    r.ticks = m_late.size();
    if (m_late.empty()) return r;
    std::sort(m_late.begin(), m_late.end());
    auto at = [this](double q) {
      return m_late[std::min(m_late.size() - 1,
                             static_cast<std::size_t>(q * static_cast<double>(m_late.size())))];
    };
    r.p50 = at(0.50);
    r.p99 = at(0.99);
    r.max = m_late.back();
    return r;
  }

 private:
  int m_tickMs;
  QTimer m_timer;
  QElapsedTimer m_clock;
  double m_last = -1;
  std::vector<double> m_late;
};

void printLateness(const char* scenario, const Lateness& l, int tickMs) {
  std::printf("  %-28s tick %d ms: lateness p50 %.2f ms, p99 %.2f ms, max %.2f ms (%zu ticks)\n",
              scenario, tickMs, l.p50, l.p99, l.max, l.ticks);
}

// Floods the controller; returns false when the run did not complete.
bool flood(const Options& options, bool withBar, const char* scenario) {
  QTemporaryDir dir;
  RunController controller;
  std::unique_ptr<RunControlBar> bar;
  if (withBar) {
    bar = std::make_unique<RunControlBar>(&controller);
    bar->setTrainer(options.trainer);
    bar->resize(1100, 60);
    bar->show();
  }
  long received = 0;
  QElapsedTimer clock;
  double firstMs = -1, lastMs = 0;
  QObject::connect(&controller, &RunController::progressReceived, [&] {
    const double now = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    if (firstMs < 0) firstMs = now;
    lastMs = now;
    ++received;
  });
  QEventLoop loop;
  QObject::connect(&controller, &RunController::finished, &loop, &QEventLoop::quit);

  LaunchRequest request;
  request.trainer = options.trainer;
  request.setRunDir(dir.filePath(QStringLiteral("run")));
  qputenv("TB_FAKE_MODE", "flood");
  qputenv("TB_FAKE_FLOOD", QByteArray::number(static_cast<qlonglong>(options.events)));
  TickProbe probe(options.tickMs);
  clock.start();
  controller.start(request);
  if (controller.isActive()) loop.exec();
  const Lateness late = probe.result();
  const double seconds = (lastMs - firstMs) / 1000.0;
  const bool ok =
      controller.state() == RunController::State::Completed && received == options.events;
  std::printf("  %-28s %ld progress events in %.3f s: %.0f events/s%s\n", scenario, received,
              seconds, seconds > 0 ? static_cast<double>(received) / seconds : 0.0,
              ok ? "" : "  [run did not complete]");
  printLateness(scenario, late, options.tickMs);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--events")
      options.events = std::atol(next("--events"));
    else if (a == "--tick-ms")
      options.tickMs = std::max(1, std::atoi(next("--tick-ms")));
    else if (a == "--trainer")
      options.trainer = QString::fromLocal8Bit(next("--trainer"));
    else {
      std::fprintf(stderr,
                   "usage: tokenbench-controller-bench [--events N] [--tick-ms T] [--trainer "
                   "PATH]\n");
      return 2;
    }
  }
  if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
  }
  QApplication app(argc, argv);
  std::printf("RunController ingest (fake trainer flood, %s)\n", qPrintable(options.trainer));

  {
    TickProbe idle(options.tickMs);
    QEventLoop wait;
    QTimer::singleShot(500, &wait, &QEventLoop::quit);
    wait.exec();
    printLateness("idle event loop (baseline)", idle.result(), options.tickMs);
  }
  bool ok = flood(options, false, "controller");
  ok = flood(options, true, "controller + run-control bar") && ok;
  return ok ? 0 : 1;
}
