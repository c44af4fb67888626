#pragma once

#include <QString>
#include <QWidget>

class QLabel;
class QProgressBar;

namespace tb::app {

/// Where a run stands: a progress bar over the planned optimizer steps and one line of text
/// ("Running · step 1,200 of 10,000 · 3.4 it/s · ETA 43 min"), or how the run ended.
class RunProgressView : public QWidget {
  Q_OBJECT

 public:
  /// Interrupted: ended without a done event, and no trainer runs it (killed, crashed, lost).
  enum class State { Empty, Running, Completed, Stopped, Failed, Interrupted };

  explicit RunProgressView(QWidget* parent = nullptr);

  /// A running run at `step` of `total` (total <= 0: unknown). `itPerS` and `etaS` may be NaN
  /// (unknown); with an unknown ETA and a known rate the ETA is worked out from them.
  void setRunning(qint64 step, qint64 total, double itPerS, double etaS);
  /// An ended run: Completed, Stopped, Interrupted or Failed (with the error's `message`).
  void setEnded(State state, qint64 step, qint64 total, const QString& message = {});
  /// Says when the run last wrote anything (shown while Running, when it is more than a minute
  /// ago: a run that died without a word looks like this).
  void setLastWrite(qint64 secondsAgo);
  /// Nothing to show (no run).
  void clear();

  State state() const { return m_state; }
  /// The line of text beside the bar.
  QString text() const;
  int value() const;
  int maximum() const;
  /// The ETA as shown ("" when unknown or not running).
  QString etaText() const { return m_eta; }

 private:
  void refresh();

  QProgressBar* m_bar = nullptr;
  QLabel* m_text = nullptr;
  State m_state = State::Empty;
  qint64 m_step = 0;
  qint64 m_total = 0;
  double m_itPerS = 0.0;
  QString m_eta;
  QString m_message;
  qint64 m_secondsSinceWrite = 0;
};

}  // namespace tb::app
