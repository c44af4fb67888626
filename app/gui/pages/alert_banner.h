#pragma once

#include <QFrame>
#include <QString>
#include <QVector>

#include <optional>

class QLabel;
class QToolButton;

namespace tb::widgets {
class WrappingList;
}

namespace tb::app {

/// One thing that went wrong in a run, as the trainer reported it.
struct RunAlert {
  enum class Severity { Warning, Critical };
  QString code;     ///< the warning or error code, e.g. "rollback", "nonfinite_step"
  QString message;  ///< the trainer's text
  std::optional<qint64> step;
  Severity severity = Severity::Warning;
};

/// A banner across the Monitor page that says, at a glance, that something went wrong in the
/// run (a non-finite step, a rollback, skipped data, an error) and how often: a count per kind,
/// the latest message, and a "Details" list with every alert, its step and message. The banner
/// is hidden while there is nothing to say; "Dismiss" hides it until the next alert arrives.
/// Critical alerts (errors, non-finite steps, rollbacks) colour it red, the others amber.
class AlertBanner : public QFrame {
  Q_OBJECT

 public:
  /// Alerts kept for the details list; older ones are dropped (the counts stay exact).
  static constexpr int kMaxListedAlerts = 1000;

  explicit AlertBanner(QWidget* parent = nullptr);

  /// Severity the Monitor gives a warning code: rollback and nonfinite_step are critical.
  static RunAlert::Severity severityOfWarning(const QString& code);
  /// "rollback" -> "rollback", "nonfinite_step" -> "non-finite step", "data_skipped" ->
  /// "skipped data"; other codes with '_' read as words.
  static QString describeCode(const QString& code, int count);

  void addAlert(const RunAlert& alert);
  /// Forgets every alert and hides the banner.
  void clear();

  /// Alerts received since the last clear() (including dismissed ones).
  int alertCount() const { return m_total; }
  /// Alerts with `code` received since the last clear().
  int alertCount(const QString& code) const;
  /// The alerts in the details list, oldest first.
  QVector<RunAlert> alerts() const { return m_alerts; }
  /// Whether the user dismissed the banner (and no alert arrived since).
  bool isDismissed() const { return m_dismissed; }
  /// The one-line summary the banner shows.
  QString summaryText() const;
  /// Whether any alert since the last clear() was critical.
  bool isCritical() const { return m_critical; }

 public Q_SLOTS:
  /// Hides the banner until the next alert.
  void dismiss();

 Q_SIGNALS:
  void dismissed();
  /// Emitted after every addAlert() and clear().
  void alertsChanged();

 private:
  void refresh();

  QLabel* m_icon = nullptr;
  QLabel* m_summary = nullptr;
  QToolButton* m_detailsButton = nullptr;
  QToolButton* m_dismissButton = nullptr;
  widgets::WrappingList* m_details = nullptr;
  QVector<RunAlert> m_alerts;
  QVector<QPair<QString, int>> m_counts;  // code -> count, in order of first appearance
  int m_total = 0;
  bool m_dismissed = false;
  bool m_critical = false;
};

}  // namespace tb::app
