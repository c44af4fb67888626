#pragma once

#include "app/control/compare_request.h"

#include <QHash>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace tb::app {

class CompareEntryList;
class FileReadThread;

/// The left column of the Compare page: open an existing compare folder, or describe a new
/// comparison (tokenizers = run directories or checkpoint folders with their names, a data
/// folder or procedural clips, the number of clips, optional LPIPS weight files, the output
/// folder), see the exact trainer command, start and cancel it, and read its progress.
///
/// The run open in the window is listed first as a tokenizer (with its classic VQ reference when
/// it has one), and its configuration fills the data folder and the LPIPS, rFID and rFVD weight
/// files the user has not typed, so comparing the open run is one click on Compare; opening
/// another run replaces it, and what the user added stays (CompareEntryList).
class CompareSetupForm : public QWidget {
  Q_OBJECT

 public:
  explicit CompareSetupForm(QWidget* parent = nullptr);

  /// The run open in the window ("" none): it replaces the previous open run in the tokenizer
  /// list, its classic VQ reference is listed under it when it has one, and its config.json
  /// fills the fields the user has not typed once it has been read (both off this thread).
  void setOpenRun(const QString& run);
  QString openRun() const { return m_openRun; }
  /// Runs the event loop until the config.json reads asked for are delivered or `timeoutMs`
  /// has passed; true when none is left. For tests: the window never waits.
  bool waitForReads(int timeoutMs = 10000);
  /// The trainer that Compare runs ("" when none was found: Compare then says so).
  void setTrainerPath(const QString& trainer);

  /// Adds a tokenizer row; `name` "" picks compareEntryName() of the folder.
  void addEntry(const QString& path, const QString& name = {});
  QVector<CompareEntry> entries() const;
  void setDataDirectory(const QString& directory);
  void setClipCount(int clips);
  void setOutputDirectory(const QString& directory);
  /// The output folder Compare will use: the field, or (when empty) a new time-stamped folder
  /// `comparisons/<yyyyMMdd-HHmmss>` beside the open run when it is listed (in the folder that
  /// holds it: never inside a run directory), else beside the first tokenizer listed, else in
  /// the home folder.
  QString effectiveOutputDirectory() const;
  /// The folder that holds `path` outside every run directory and checkpoint folder around it
  /// (for runs/demo/checkpoints/step_300: runs).
  static QString folderOutsideRuns(const QString& path);

  /// The request the fields describe, or nothing with `*problem` saying what is missing.
  std::optional<CompareRequest> request(QString* problem = nullptr) const;
  /// The command line the Compare button runs (for the user to see or paste).
  QString commandLine() const;

  /// While running, the inputs are locked and Cancel replaces Compare.
  void setRunning(bool running);
  /// One line of the trainer's progress (stderr) for the log.
  void appendLog(const QString& line);
  void clearLog();
  /// The sentence under the buttons; `error` colours it as a failure.
  void setStatus(const QString& text, bool error = false);
  QString statusText() const;

 Q_SIGNALS:
  void openFolderRequested();
  void compareRequested();
  void cancelRequested();

 private:
  /// The trainer's `compare` options as the form stands.
  core::CompareCommand command() const;
  void chooseEntryFolder();
  /// The path the default output goes beside: the open run when listed, else the first tokenizer.
  QString outputAnchor() const;
  void chooseDirectoryFor(QLineEdit* edit, const QString& title);
  void chooseFileFor(QLineEdit* edit, const QString& title);
  void fillFromRunConfig(const QString& run);
  void updateCommandLine();

  QString m_openRun;
  QString m_trainer;
  mutable QString m_defaultStamp;
  CompareEntryList* m_entries = nullptr;
  QLineEdit* m_data = nullptr;
  QComboBox* m_dataType = nullptr;
  QSpinBox* m_clips = nullptr;
  QComboBox* m_lpipsNet = nullptr;
  QLineEdit* m_lpipsBackbone = nullptr;
  QLineEdit* m_lpipsLin = nullptr;
  QLineEdit* m_fidWeights = nullptr;
  QLineEdit* m_fvdWeights = nullptr;
  QLineEdit* m_output = nullptr;
  QLabel* m_command = nullptr;
  QPushButton* m_open = nullptr;
  QPushButton* m_compare = nullptr;
  QPushButton* m_cancel = nullptr;
  QLabel* m_status = nullptr;
  QPlainTextEdit* m_log = nullptr;
  QList<QWidget*> m_inputs;
  FileReadThread* m_reads = nullptr;  // child: reads the runs' config.json
  // What the form filled into each field from the open run's configuration.
  QHash<QLineEdit*, QString> m_filled;
  // folderOutsideRuns of each tokenizer path, read on m_reads (it looks at every folder above
  // the path); m_outsideRunsAsked: the paths whose read is on its way or done.
  QHash<QString, QString> m_outsideRuns;
  QSet<QString> m_outsideRunsAsked;
};

}  // namespace tb::app
