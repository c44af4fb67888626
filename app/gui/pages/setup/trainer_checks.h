#pragma once

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
///   settings changed, and not while they or the model's have a problem.
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

 private:
  TrainerQuery* m_modelQuery = nullptr;
  TrainerQuery* m_dataQuery = nullptr;
  std::unique_ptr<QTemporaryDir> m_previewDir;
  ModelInfoView* m_modelInfo = nullptr;
  DataInfoView* m_dataInfo = nullptr;
  QString m_trainerPath;
  QString m_trainerText;
  std::string m_lastModelInput;
  std::string m_lastDataInput;
};

}  // namespace tb::app
