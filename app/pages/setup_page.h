#pragma once

#include <QWidget>

class QLabel;

namespace tb::app {

struct TrainerLocation;

/// Setup: what a training run would start from — configuration file, run directory and
/// trainer executable. The editors for dataset, model and distributed settings come later;
/// until then the page says so rather than showing controls that do nothing.
class SetupPage : public QWidget {
  Q_OBJECT

 public:
  explicit SetupPage(QWidget* parent = nullptr);

  /// Shows the configuration file named with --config ("" for none).
  void setConfigPath(const QString& path);
  /// Shows the run directory that is open ("" for none).
  void setRunDirectory(const QString& path);
  /// Shows which trainer a run would use, or why none was found.
  void setTrainerLocation(const TrainerLocation& trainer);

  QString configText() const;
  QString runDirectoryText() const;
  QString trainerText() const;

 private:
  QLabel* m_config = nullptr;
  QLabel* m_runDirectory = nullptr;
  QLabel* m_trainer = nullptr;
};

}  // namespace tb::app
