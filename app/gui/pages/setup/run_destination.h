#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

#include <functional>

class QLineEdit;

namespace tb::app {

/// Where the next run goes: the runs folder (with Browse…) and the run's name in it, on a line
/// of the Setup page's bar. Until the user types a name, the name is suggested: a base (the
/// preset, or the file the settings came from) and the time, "demo-20241201-143000", with -2,
/// -3, ... when that is taken.
class RunDestination : public QWidget {
  Q_OBJECT

 public:
  explicit RunDestination(QWidget* parent = nullptr);

  /// What suggested names start with ("" for "run"); asked each time a name is suggested.
  void setNameBase(std::function<QString()> base);

  /// Runs folder joined with the run name, absolute and cleaned.
  QString runDirectory() const;
  /// Why a launch cannot go to runDirectory() (no folder, no or a bad name, a run is there
  /// already); empty when it can.
  QStringList problems() const;

  /// A new suggested name, unless the user named the run.
  void suggestName();
  /// A run directory opened in the window: its parent becomes the runs folder. A folder that
  /// holds no run yet (no config.json) becomes the run directory itself; beside an existing
  /// run, a fresh name is suggested, so that a launch never targets a run that is there.
  void placeBeside(const QString& path);
  /// Focuses the run name, selected.
  void focusName();

 Q_SIGNALS:
  /// The user changed the runs folder or the run name.
  void edited();

 private:
  void chooseRunsFolder();

  QLineEdit* m_runsFolder = nullptr;
  QLineEdit* m_runName = nullptr;
  std::function<QString()> m_nameBase;
  bool m_nameAuto = true;  // the name is suggested until the user types one
};

}  // namespace tb::app
