#include "app/gui/pages/setup/trainer_checks.h"

#include "app/control/config_document.h"
#include "app/control/trainer_query.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "core/config_schema.h"

#include <QDir>
#include <QStringList>
#include <QTemporaryDir>

#include <vector>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPreviewClips = 4;
constexpr int kDataInfoTimeLimitMs = 10 * 60 * 1000;
constexpr int kModelInfoTimeLimitMs = 2 * 60 * 1000;

}  // namespace

TrainerChecks::TrainerChecks(QObject* parent) : QObject(parent) {
  m_modelQuery = new TrainerQuery(this);
  m_dataQuery = new TrainerQuery(this);
  // The first scan of a large video folder probes every file (later scans use the trainer's
  // index cache); building a large model for model-info takes seconds, not minutes.
  m_dataQuery->setTimeLimit(kDataInfoTimeLimitMs);
  m_modelQuery->setTimeLimit(kModelInfoTimeLimitMs);
  m_previewDir = std::make_unique<QTemporaryDir>(QDir::tempPath() +
                                                 QStringLiteral("/tokenbench-preview-XXXXXX"));
}

TrainerChecks::~TrainerChecks() {
  // The queries' processes must be gone before the preview folder is removed.
  m_modelQuery->cancel();
  m_dataQuery->cancel();
  m_previewDir.reset();
}

void TrainerChecks::setViews(ModelInfoView* model, DataInfoView* data) {
  m_modelInfo = model;
  m_dataInfo = data;
  connect(m_modelQuery, &TrainerQuery::busy, m_modelInfo, &ModelInfoView::setComputing);
  connect(m_modelQuery, &TrainerQuery::succeeded, m_modelInfo, &ModelInfoView::setResult);
  connect(m_modelQuery, &TrainerQuery::failed, m_modelInfo,
          [this](const QString& message) { m_modelInfo->setError(message); });
  connect(m_dataQuery, &TrainerQuery::busy, m_dataInfo, &DataInfoView::setComputing);
  connect(m_dataQuery, &TrainerQuery::succeeded, m_dataInfo, &DataInfoView::setResult);
  connect(m_dataQuery, &TrainerQuery::failed, m_dataInfo,
          [this](const QString& message) { m_dataInfo->setError(message); });
}

void TrainerChecks::setTrainer(const QString& path, const QString& text) {
  m_trainerPath = path;
  m_trainerText = text;
  m_modelQuery->setProgram(path);
  m_dataQuery->setProgram(path);
}

void TrainerChecks::forgetInputs() {
  m_lastModelInput.clear();
  m_lastDataInput.clear();
}

bool TrainerChecks::isCheckingData() const { return m_dataQuery->isBusy(); }

void TrainerChecks::checkModel(const Json& document, const ConfigProblems& problems) {
  // model-info describes the model: the dataset's folder and the distributed settings do not
  // change it, so problems there must not hide the summary.
  Json input = document;
  if (input.contains("data") && input["data"].is_object()) {
    input["data"]["type"] = "synthetic";
    input["data"]["path"] = "";
  }
  input.erase("distributed");
  const std::vector<core::FieldInfo> schema = core::configSchema();
  for (const auto& [path, message] : problems) {
    const QString key = configKeyOf(path);
    if (key.startsWith(QLatin1String("model.")) || key.startsWith(QLatin1String("data."))) continue;
    for (const core::FieldInfo& field : schema) {
      if (QString::fromStdString(field.path) == key)
        input[ConfigDocument::pointerOf(key)] = field.default_value;
    }
  }
  const std::string text = input.dump();
  if (text == m_lastModelInput) return;
  m_lastModelInput = text;
  if (m_trainerPath.isEmpty()) {
    m_modelQuery->cancel();
    m_modelInfo->setUnavailable(tr("No trainer found, so no model summary: %1").arg(m_trainerText));
    return;
  }
  m_modelQuery->request(
      {QStringLiteral("model-info"), QStringLiteral("--config"), QStringLiteral("-")},
      QByteArray::fromStdString(text));
}

void TrainerChecks::checkData(const Json& document, const ConfigProblems& problems) {
  // Scanning a folder of videos can be slow, so only a change to the dataset settings scans
  // again. The model goes along because the trainer checks the frame size and count against
  // it; while it or the dataset has a problem nothing is sent, and the scan runs once it is
  // fixed (the remembered input is forgotten while blocked).
  QStringList blocking;
  for (const auto& [path, message] : problems) {
    if (path.startsWith(QLatin1String("data.")) || path.startsWith(QLatin1String("model."))) {
      blocking << path + QStringLiteral(": ") + message;
    }
  }
  if (!blocking.isEmpty()) {
    m_lastDataInput.clear();
    m_dataQuery->cancel();
    m_dataInfo->setUnavailable(tr("Not scanned until the dataset and model settings are valid:\n%1")
                                   .arg(blocking.join(QLatin1Char('\n'))));
    return;
  }
  const std::string key = document.contains("data") ? document["data"].dump() : std::string();
  if (key == m_lastDataInput) return;
  m_lastDataInput = key;
  if (m_trainerPath.isEmpty()) {
    m_dataQuery->cancel();
    m_dataInfo->setUnavailable(
        tr("No trainer found, so the data cannot be scanned: %1").arg(m_trainerText));
    return;
  }
  Json input = Json::object();
  for (const char* section : {"version", "data", "model"}) {
    if (document.contains(section)) input[section] = document[section];
  }
  QStringList arguments{QStringLiteral("data-info"), QStringLiteral("--config"),
                        QStringLiteral("-")};
  if (m_previewDir->isValid()) {
    arguments << QStringLiteral("--preview") << m_previewDir->path()
              << QStringLiteral("--preview-clips") << QString::number(kPreviewClips);
  }
  m_dataQuery->request(arguments, QByteArray::fromStdString(input.dump()));
}

}  // namespace tb::app
