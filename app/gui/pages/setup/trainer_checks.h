#pragma once

#include "app/control/file_read_thread.h"
#include "app/gui/pages/setup/config_key.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>

#include <memory>
#include <string>

class QTemporaryDir;

namespace tb::app {

class DataInfoView;
class ModelInfoView;
class TrainerQuery;

/// The checks the Setup page has the trainer run on its settings, in processes of their own
/// (TrainerQuery: asynchronous, the newest request wins):
///
/// - `model-info`, the model summary, shown in a ModelInfoView. The dataset and distributed
///   settings do not change the model, so their problems do not hold it back;
/// - `data-info`, what the trainer finds in the data (with a few preview clips), shown in a
///   DataInfoView. Scanning a folder of videos can be slow: it runs again only when the dataset
///   settings changed, and not while they or the model's have a problem. When the trainer finds
///   nothing to read in the folder, the folder's files are counted (off the window's thread):
///   a folder of videos given as images (or the other way round) is said so, with the fix.
///
/// Without a trainer, each view says why it has nothing to show.
class TrainerChecks : public QObject {
  Q_OBJECT

 public:
  explicit TrainerChecks(QObject* parent = nullptr);
  /// Ends the checks' processes, then removes the preview folder.
  ~TrainerChecks() override;

  /// Where the answers are shown (both must outlive this object's queries' reports).
  void setViews(ModelInfoView* model, DataInfoView* data);
  TrainerQuery* modelQuery() const { return m_modelQuery; }
  TrainerQuery* dataQuery() const { return m_dataQuery; }

  /// The trainer that runs the checks (`path` "" when none was found; `text` says why).
  void setTrainer(const QString& path, const QString& text);
  /// The next checks run even when their input is what it was.
  void forgetInputs();
  /// The next data check runs even when its input is what it was ("Scan again").
  void forgetDataInput() { m_lastDataInput.clear(); }

  /// Asks for `model-info` on `document`, unless that input was asked for last; `problems`
  /// are core validation's (keys outside model and data take their defaults).
  void checkModel(const nlohmann::ordered_json& document, const ConfigProblems& problems);
  /// Asks for `data-info` on `document`'s data and model, unless that input was asked for last
  /// or `problems` include some of theirs.
  void checkData(const nlohmann::ordered_json& document, const ConfigProblems& problems);
  /// True from a data check's request until its answer (or failure).
  bool isCheckingData() const;

  /// What a folder that holds no file of `type` ("videos" or "images") does hold, as a problem
  /// with its fix ("no image files in DIR, but 5 video files: set Type to videos"). `videos`
  /// and `images` are the folder's counts (`complete` false when counting stopped early).
  static QString emptyFolderProblem(const QString& type, const QString& path, qint64 videos,
                                    qint64 images, bool complete = true);

 Q_SIGNALS:
  /// A data check ended: `problem` is why the data cannot train a run ("" when it can).
  void dataChecked(const QString& problem);

 private:
  TrainerQuery* m_modelQuery = nullptr;
  TrainerQuery* m_dataQuery = nullptr;
  std::unique_ptr<QTemporaryDir> m_previewDir;
  void dataFailed(const QString& message);

  ModelInfoView* m_modelInfo = nullptr;
  DataInfoView* m_dataInfo = nullptr;
  QString m_trainerPath;
  QString m_trainerText;
  std::string m_lastModelInput;
  std::string m_lastDataInput;
  QString m_dataType;  // data.type and data.path of the data check asked for last
  QString m_dataPath;
  int m_dataRequest = 0;       // counts data checks asked for (and cancelled)
  int m_countingRequest = -1;  // the check whose folder is being counted
  FileReadThread m_folderReads{QStringLiteral("dataset folder")};
};

}  // namespace tb::app
