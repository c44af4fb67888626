#include "app/gui/pages/setup/trainer_checks.h"

#include "app/control/config_document.h"
#include "app/control/trainer_query.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "core/config_schema.h"
#include "core/media_files.h"

#include <QDir>
#include <QStringList>
#include <QTemporaryDir>

#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
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
  connect(m_dataQuery, &TrainerQuery::succeeded, this, [this](const QByteArray& output) {
    m_dataInfo->setResult(output);
    Q_EMIT dataChecked(m_dataInfo->state() == DataInfoView::State::Ready
                           ? m_dataInfo->problem()
                           : m_dataInfo->statusText());
  });
  connect(m_dataQuery, &TrainerQuery::failed, this,
          [this](const QString& message) { dataFailed(message); });
}

void TrainerChecks::dataFailed(const QString& message) {
  const bool media = m_dataType == QLatin1String("videos") || m_dataType == QLatin1String("images");
  if (!media || m_dataPath.isEmpty()) {
    m_dataInfo->setError(message);
    Q_EMIT dataChecked(message);
    return;
  }
  // The trainer found nothing it could read there: what does the folder hold?
  m_countingRequest = m_dataRequest;
  const std::string root = QDir(m_dataPath).absolutePath().toStdString();
  m_folderReads.read(
      [root]() -> std::optional<core::MediaFileCount> {
        std::error_code ec;
        if (!std::filesystem::is_directory(root, ec)) return std::nullopt;
        return core::countMediaFiles(root);
      },
      [this, request = m_dataRequest, message](const std::optional<core::MediaFileCount>& count) {
        if (request != m_countingRequest) return;  // the data settings changed since
        m_countingRequest = -1;
        QString problem = message;
        if (count) {
          const QString better = emptyFolderProblem(m_dataType, m_dataPath, count->videos,
                                                    count->images, count->complete);
          if (!better.isEmpty()) problem = better;
        }
        m_dataInfo->setError(problem);
        Q_EMIT dataChecked(problem);
      });
}

QString TrainerChecks::emptyFolderProblem(const QString& type, const QString& path, qint64 videos,
                                          qint64 images, bool complete) {
  const bool wantImages = type == QLatin1String("images");
  if ((wantImages ? images : videos) > 0) return {};  // files are there: the trainer's reason
  const qint64 other = wantImages ? videos : images;
  const QString what = wantImages ? tr("no image files") : tr("no video files");
  if (other == 0) {
    QStringList extensions;
    const auto add = [&extensions](const auto& list) {
      for (std::string_view ext : list) extensions << QString::fromLatin1(ext.data(), ext.size());
    };
    if (wantImages) {
      add(core::kImageExtensions);
    } else {
      add(core::kVideoExtensions);
    }
    return tr("%1 (%2) in %3").arg(what, extensions.join(QLatin1Char(' ')), path);
  }
  const QString kind = wantImages ? (other == 1 ? tr("video file") : tr("video files"))
                                  : (other == 1 ? tr("image file") : tr("image files"));
  const QString count =
      (complete ? tr("%1 %2") : tr("at least %1 %2")).arg(QString::number(other), kind);
  return tr("%1 in %2, but %3: set Type to %4")
      .arg(what, path, count, wantImages ? QStringLiteral("videos") : QStringLiteral("images"));
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

bool TrainerChecks::isCheckingData() const {
  return m_dataQuery->isBusy() || m_countingRequest == m_dataRequest;
}

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
    ++m_dataRequest;  // a folder count of an earlier check no longer reports
    m_lastDataInput.clear();
    m_dataQuery->cancel();
    m_dataInfo->setUnavailable(tr("Not scanned until the dataset and model settings are valid:\n%1")
                                   .arg(blocking.join(QLatin1Char('\n'))));
    return;
  }
  const std::string key = document.contains("data") ? document["data"].dump() : std::string();
  if (key == m_lastDataInput) return;
  ++m_dataRequest;
  m_lastDataInput = key;
  const auto text = [&document](const char* name) {
    const Json* data = document.contains("data") ? &document["data"] : nullptr;
    return data != nullptr && data->contains(name) && (*data)[name].is_string()
               ? QString::fromStdString((*data)[name].get<std::string>())
               : QString();
  };
  m_dataType = text("type");
  m_dataPath = text("path");
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
