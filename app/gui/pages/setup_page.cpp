// SetupPage, part one: the document, validation, trainer queries, load/save and the run
// directory. Building the panels is in setup_page_panels.cpp.

#include "app/gui/pages/setup_page.h"

#include "app/control/run_summary_reader.h"
#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "app/gui/pages/page_header.h"
#include "core/config_io.h"
#include "core/presets.h"
#include "widgets/colours.h"
#include "widgets/layer_stack_editor.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPalette>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QStyle>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QVBoxLayout>

#include <map>
#include <set>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPreviewClips = 4;
constexpr int kDataInfoTimeLimitMs = 10 * 60 * 1000;
constexpr int kModelInfoTimeLimitMs = 2 * 60 * 1000;
const QString kRunDirPath = QStringLiteral("run_dir");
const QString kDataPath = QStringLiteral("data.path");

// "model.layers[3]" -> "model.layers", 3.
QString keyOf(const QString& path, int* index = nullptr) {
  static const QRegularExpression kIndex(QStringLiteral("^(.*?)\\[(\\d+)\\]"));
  const QRegularExpressionMatch m = kIndex.match(path);
  if (!m.hasMatch()) {
    if (index != nullptr) *index = -1;
    return path;
  }
  if (index != nullptr) *index = m.captured(2).toInt();
  return m.captured(1);
}

std::vector<core::LayerSpec> layersFromJson(const Json& list) {
  std::vector<core::LayerSpec> layers;
  if (!list.is_array()) return layers;
  for (const Json& element : list) {
    if (element.is_string()) {
      layers.push_back({element.get<std::string>(), {}});
    } else if (element.is_array() && element.size() == 2 && element[0].is_string() &&
               element[1].is_number_integer()) {
      layers.push_back({element[0].get<std::string>(), element[1].get<int>()});
    } else {
      layers.push_back({element.dump(), {}});  // shown as written; validation marks it
    }
  }
  return layers;
}

Json layersToJson(const std::vector<core::LayerSpec>& layers) {
  Json out = Json::array();
  for (const core::LayerSpec& layer : layers) {
    if (layer.arg) {
      out.push_back(Json::array({layer.name, *layer.arg}));
    } else {
      out.push_back(layer.name);
    }
  }
  return out;
}

void setColor(QLabel* label, const QColor& color) {
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, color);
  label->setPalette(palette);
  label->setForegroundRole(QPalette::WindowText);
}

}  // namespace

SetupPage::SetupPage(QWidget* parent) : QWidget(parent), m_config(new ConfigDocument(this)) {
  m_modelQuery = new TrainerQuery(this);
  m_dataQuery = new TrainerQuery(this);
  // The first scan of a large video folder probes every file (later scans use the trainer's
  // index cache); building a large model for model-info takes seconds, not minutes.
  m_dataQuery->setTimeLimit(kDataInfoTimeLimitMs);
  m_modelQuery->setTimeLimit(kModelInfoTimeLimitMs);
  m_previewDir = new QTemporaryDir(QDir::tempPath() + QStringLiteral("/tokenbench-preview-XXXXXX"));

  createEditors();
  buildTopBar();
  buildPanels();

  auto* header = new PageHeader(
      tr("Setup"),
      tr("The run configuration: dataset, model, training and distributed settings. Problems "
         "are outlined in red and listed below; a run starts only without them."),
      this);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 16, 24, 12);
  layout->setSpacing(10);
  layout->addWidget(header);
  layout->addWidget(m_bar);
  // The summary is always one line; the list of problems opens under the panels, so that
  // neither moves the fields the user is about to click.
  layout->addWidget(m_summary);
  layout->addWidget(m_tabs, 1);
  layout->addWidget(m_problems);

  connect(m_modelQuery, &TrainerQuery::busy, m_modelInfo, &ModelInfoView::setComputing);
  connect(m_modelQuery, &TrainerQuery::succeeded, m_modelInfo, &ModelInfoView::setResult);
  connect(m_modelQuery, &TrainerQuery::failed, m_modelInfo,
          [this](const QString& message) { m_modelInfo->setError(message); });
  connect(m_dataQuery, &TrainerQuery::busy, m_dataInfo, &DataInfoView::setComputing);
  connect(m_dataQuery, &TrainerQuery::succeeded, m_dataInfo, &DataInfoView::setResult);
  connect(m_dataQuery, &TrainerQuery::failed, m_dataInfo,
          [this](const QString& message) { m_dataInfo->setError(message); });
  // What data-info finds wrong is a problem like any other: a launch would fail on it.
  connect(m_dataQuery, &TrainerQuery::busy, this, [this] { setDataProblem({}); });
  connect(m_dataQuery, &TrainerQuery::succeeded, this, [this] {
    setDataProblem(m_dataInfo->state() == DataInfoView::State::Ready ? m_dataInfo->problem()
                                                                     : m_dataInfo->statusText());
  });
  connect(m_dataQuery, &TrainerQuery::failed, this,
          [this](const QString& message) { setDataProblem(message); });

  m_trainerText = tr("not searched");
  m_trainer->setText(m_trainerText);
  const std::vector<core::PresetInfo> all = core::presets();
  if (!all.empty()) applyPreset(QString::fromStdString(all.front().name));
}

SetupPage::~SetupPage() {
  // The queries' processes must be gone before the preview folder is removed.
  m_modelQuery->cancel();
  m_dataQuery->cancel();
  delete m_previewDir;
}

QStringList SetupPage::specialKeys() {
  return {QStringLiteral("version"), QStringLiteral("model.layers")};
}

// -- The document ------------------------------------------------------------------------------

QString SetupPage::configJsonText() const { return m_config->text(); }

// After the whole document was replaced (a file, a preset): editors, checks and queries follow.
void SetupPage::documentReplaced() {
  m_lastModelInput.clear();
  m_lastDataInput.clear();
  showDocumentInEditors();
  revalidate();
  refreshModelKind();
  refreshDependentFields();
  refreshSourceLabel();
  refreshCommandLine();
  requestModelInfo();
  requestDataInfo();
  Q_EMIT configChanged();
}

void SetupPage::showDocumentInEditors() {
  for (ConfigFieldEditor* editor : std::as_const(m_editors)) {
    editor->setValue(value(editor->path()));
  }
  m_layers->setLayers(layersFromJson(value(QStringLiteral("model.layers"))));
}

Json SetupPage::value(const QString& path) const { return m_config->value(path); }

void SetupPage::setValue(const QString& path, const Json& value) {
  m_config->setValue(path, value);
  if (ConfigFieldEditor* editor = m_editors.value(path)) editor->setValue(value);
  if (path == QLatin1String("model.layers")) m_layers->setLayers(layersFromJson(value));
  documentEdited(path);
}

void SetupPage::onFieldEdited(const QString& path) {
  const ConfigFieldEditor* editor = m_editors.value(path);
  if (editor == nullptr) return;
  m_config->setValue(path, editor->value());
  documentEdited(path);
}

void SetupPage::onLayersEdited() {
  m_config->setValue(QStringLiteral("model.layers"), layersToJson(m_layers->layers()));
  documentEdited(QStringLiteral("model.layers"));
}

void SetupPage::documentEdited(const QString& changedPath) {
  m_modified = true;
  revalidate();
  Q_UNUSED(changedPath);
  refreshModelKind();
  refreshDependentFields();
  refreshSourceLabel();
  refreshCommandLine();
  requestModelInfo();
  requestDataInfo();
  Q_EMIT configChanged();
}

void SetupPage::revalidate() {
  m_configErrors.clear();
  for (const core::ConfigError& e : m_config->errors()) {
    m_configErrors.emplace_back(QString::fromStdString(e.path), QString::fromStdString(e.message));
  }

  QHash<QString, QStringList> byKey;
  QMap<int, QString> layerErrors;
  QStringList layerListErrors;
  for (const auto& [path, message] : m_configErrors) {
    int index = -1;
    const QString key = keyOf(path, &index);
    if (key == QLatin1String("model.layers")) {
      if (index >= 0) {
        layerErrors[index] +=
            (layerErrors[index].isEmpty() ? QString() : QStringLiteral("\n")) + message;
      } else {
        layerListErrors << message;
      }
      continue;
    }
    byKey[key] << (index >= 0 ? QStringLiteral("entry %1: %2").arg(index + 1).arg(message)
                              : message);
  }
  for (ConfigFieldEditor* editor : std::as_const(m_editors)) {
    editor->setError(byKey.value(editor->path()).join(QLatin1Char('\n')));
  }
  m_layers->setErrors(layerErrors, layerListErrors.join(QLatin1Char('\n')));
  refreshProblemList();
}

QStringList SetupPage::runDirectoryProblems() const {
  QStringList problems;
  const QString name = m_runName->text().trimmed();
  if (m_runsFolder->text().trimmed().isEmpty()) problems << tr("the runs folder is empty");
  if (name.isEmpty()) {
    problems << tr("the run name is empty");
  } else if (name.contains(QLatin1Char('/')) || name == QLatin1String(".") ||
             name == QLatin1String("..")) {
    problems << tr("the run name must be a plain folder name, got \"%1\"").arg(name);
  } else if (QFileInfo::exists(pathText(runDirectoryAt(runDirectory()).configFile()))) {
    problems << tr("%1 already holds a run (config.json): choose another name, or resume that "
                   "run from the Runs page")
                    .arg(runDirectory());
  }
  return problems;
}

QStringList SetupPage::validationErrors() const {
  QStringList errors;
  for (const auto& [path, message] : m_configErrors) {
    errors << (path.isEmpty() ? message : path + QStringLiteral(": ") + message);
  }
  if (!m_dataProblem.isEmpty()) errors << kDataPath + QStringLiteral(": ") + m_dataProblem;
  for (const QString& problem : runDirectoryProblems()) {
    errors << kRunDirPath + QStringLiteral(": ") + problem;
  }
  return errors;
}

void SetupPage::setDataProblem(const QString& problem) {
  if (problem == m_dataProblem) return;
  m_dataProblem = problem;
  refreshProblemList();
  Q_EMIT configChanged();  // a refused launch is checked again
}

void SetupPage::refreshProblemList() {
  m_problems->clear();
  auto addItem = [this](const QString& path, const QString& message) {
    auto* item = new QListWidgetItem(
        style()->standardIcon(QStyle::SP_MessageBoxWarning),
        path.isEmpty() ? message : path + QStringLiteral(": ") + message, m_problems);
    item->setData(Qt::UserRole, path);
    item->setToolTip(tr("Click to go to %1").arg(path.isEmpty() ? tr("the document") : path));
  };
  for (const auto& [path, message] : m_configErrors) addItem(path, message);
  if (!m_dataProblem.isEmpty()) addItem(kDataPath, m_dataProblem);
  for (const QString& problem : runDirectoryProblems()) addItem(kRunDirPath, problem);

  const int count = m_problems->count();
  if (count == 0 && m_dataQuery->isBusy()) {
    m_summary->setText(tr("\u2713  No problems in the settings; the data is being checked\u2026"));
    setColor(m_summary, widgets::colours::ok());
  } else if (count == 0) {
    m_summary->setText(tr("\u2713  No problems: this configuration can be launched."));
    setColor(m_summary, widgets::colours::ok());
  } else {
    m_summary->setText(count == 1
                           ? tr("\u2717  1 problem must be fixed before a launch:")
                           : tr("\u2717  %1 problems must be fixed before a launch:").arg(count));
    setColor(m_summary, widgets::colours::error());
  }
  m_problems->setVisible(count > 0);
  const int rowHeight = m_problems->sizeHintForRow(0) > 0 ? m_problems->sizeHintForRow(0)
                                                          : fontMetrics().height() + 4;
  m_problems->setFixedHeight(std::min(count, 4) * rowHeight + 2 * m_problems->frameWidth() + 2);
}

QStringList SetupPage::problemListText() const {
  QStringList texts;
  for (int row = 0; row < m_problems->count(); ++row) texts << m_problems->item(row)->text();
  return texts;
}

QString SetupPage::validationSummaryText() const { return m_summary->text(); }

void SetupPage::refreshDependentFields() {
  const auto text = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString();
  };
  const auto positive = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_number() && v.get<double>() > 0;
  };
  const auto on = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_boolean() && v.get<bool>();
  };
  // Keys that only matter for some values of another key (as their documentation says) are
  // greyed out otherwise. A key with a problem stays editable so that it can be fixed.
  const bool gan = positive("loss.adversarial_weight");
  const std::map<QString, bool> used = {
      {QStringLiteral("data.path"), text("data.type") != QLatin1String("synthetic")},
      {QStringLiteral("data.valid_path"), text("data.type") != QLatin1String("synthetic")},
      {QStringLiteral("data.valid_fraction"),
       text("data.type") == QLatin1String("synthetic") || text("data.valid_path").isEmpty()},
      {QStringLiteral("data.synthetic_clips"), text("data.type") == QLatin1String("synthetic")},
      {QStringLiteral("model.discriminator.patchgan_layers"),
       text("model.discriminator.type") == QLatin1String("patchgan")},
      {QStringLiteral("loss.perceptual_net"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.lpips_backbone"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.lpips_lin"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.perceptual_frames"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.adaptive_weight"), gan},
      {QStringLiteral("loss.adaptive_weight_max"), gan && on("loss.adaptive_weight")},
      {QStringLiteral("loss.discr_start_step"), gan},
      {QStringLiteral("loss.r1_weight"), gan},
      {QStringLiteral("loss.r1_every"), gan && positive("loss.r1_weight")},
      {QStringLiteral("loss.lecam_weight"), gan},
      {QStringLiteral("loss.lecam_decay"), gan && positive("loss.lecam_weight")},
      {QStringLiteral("train.discr_lr"), gan},
      {QStringLiteral("train.min_lr_ratio"),
       text("train.schedule").startsWith(QLatin1String("cosine"))},
      {QStringLiteral("train.ema_beta"), on("train.ema")},
      {QStringLiteral("train.ema_update_every"), on("train.ema")},
      {QStringLiteral("train.ema_start_step"), on("train.ema")},
  };
  const QString quantizer = text("model.quantizer.type");
  for (auto it = m_editors.constBegin(); it != m_editors.constEnd(); ++it) {
    const QString& path = it.key();
    bool inUse = true;
    if (const auto rule = used.find(path); rule != used.end()) inUse = rule->second;
    if (path.startsWith(QLatin1String("model.quantizer.fsq_"))) {
      inUse = quantizer == QLatin1String("fsq");
    }
    if (path.startsWith(QLatin1String("model.quantizer.vq_"))) {
      inUse = quantizer == QLatin1String("vq");
    }
    inUse = inUse || it.value()->hasError();
    it.value()->setEnabled(inUse);
    if (QLabel* label = m_labels.value(path)) label->setEnabled(inUse);
  }
}

void SetupPage::refreshModelKind() {
  const QString kind =
      QString::fromStdString(value(QStringLiteral("model.kind")).is_string()
                                 ? value(QStringLiteral("model.kind")).get<std::string>()
                                 : std::string("magvit2"));
  const bool vqgan = kind == QLatin1String("vqgan");
  auto groupHasError = [this](QGroupBox* group) {
    for (auto it = m_groupOf.constBegin(); it != m_groupOf.constEnd(); ++it) {
      if (it.value() != group) continue;
      const ConfigFieldEditor* editor = m_editors.value(it.key());
      if (editor != nullptr && editor->hasError()) return true;
    }
    return group == m_magvitGroup && !m_layers->errorRows().isEmpty();
  };
  // The architecture not in use is hidden, unless it holds a problem the user must see.
  m_magvitGroup->setVisible(!vqgan || groupHasError(m_magvitGroup));
  m_vqganGroup->setVisible(vqgan || groupHasError(m_vqganGroup));
  m_magvitGroup->setTitle(vqgan ? tr("MAGVIT-v2 architecture (not used: model.kind is vqgan)")
                                : tr("MAGVIT-v2 architecture"));
  m_vqganGroup->setTitle(vqgan ? tr("VQGAN architecture")
                               : tr("VQGAN architecture (not used: model.kind is %1)").arg(kind));
}

// -- Trainer queries ---------------------------------------------------------------------------

void SetupPage::requestModelInfo() {
  // model-info describes the model: the dataset's folder and the distributed settings do not
  // change it, so problems there must not hide the summary.
  Json input = m_config->json();
  if (input.contains("data") && input["data"].is_object()) {
    input["data"]["type"] = "synthetic";
    input["data"]["path"] = "";
  }
  input.erase("distributed");
  const std::vector<core::FieldInfo> schema = core::configSchema();
  for (const auto& [path, message] : m_configErrors) {
    const QString key = keyOf(path);
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

void SetupPage::requestDataInfo() {
  // Scanning a folder of videos can be slow, so only a change to the dataset settings scans
  // again. The model goes along because the trainer checks the frame size and count against
  // it; while it or the dataset has a problem nothing is sent, and the scan runs once it is
  // fixed (the remembered input is forgotten while blocked).
  QStringList blocking;
  for (const auto& [path, message] : m_configErrors) {
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
  const Json& document = m_config->json();
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

// -- Load, save, presets -----------------------------------------------------------------------

bool SetupPage::loadConfigFile(const QString& path) {
  if (!m_config->load(path)) {
    showMessage(tr("Not loaded: %1").arg(m_config->loadError()), true);
    return false;
  }
  m_preset.clear();
  m_sourceFile = QFileInfo(path).absoluteFilePath();
  m_modified = false;
  m_presetBox->setCurrentIndex(-1);
  suggestRunName();
  documentReplaced();
  showMessage(m_configErrors.empty() ? tr("Loaded %1").arg(m_sourceFile)
                                     : tr("Loaded %1 with %2 problem(s), listed below")
                                           .arg(m_sourceFile)
                                           .arg(m_configErrors.size()),
              !m_configErrors.empty());
  return true;
}

bool SetupPage::saveConfigFile(const QString& path) {
  QString error;
  if (!m_config->save(path, &error)) {
    showMessage(tr("Not saved: %1").arg(error), true);
    return false;
  }
  m_sourceFile = QFileInfo(path).absoluteFilePath();
  m_modified = false;
  refreshSourceLabel();
  showMessage(tr("Saved %1").arg(m_sourceFile), false);
  return true;
}

bool SetupPage::applyPreset(const QString& name) {
  const core::ConfigLoad load = core::loadPreset(name.toStdString());
  if (!load.ok()) {
    showMessage(
        tr("Preset %1: %2").arg(name, QString::fromStdString(load.errors.front().toString())),
        true);
    return false;
  }
  m_preset = name;
  m_sourceFile.clear();
  m_modified = false;
  m_presetBox->setCurrentIndex(m_presetBox->findData(name));
  suggestRunName();
  showMessage({}, false);
  m_config->setDocument(core::toJson(load.config));
  documentReplaced();
  return true;
}

QString SetupPage::lastMessage() const { return m_messageText; }

bool SetupPage::isModified() const { return m_modified; }

bool SetupPage::confirmDiscardEdits(const QString& action) {
  if (!m_modified) return true;
  QMessageBox box(QMessageBox::Question, action,
                  tr("Discard your changes to the settings (%1)?").arg(configText()),
                  QMessageBox::Cancel, this);
  box.setObjectName(QStringLiteral("discardEditsBox"));
  box.setInformativeText(tr("Save JSON\u2026 keeps them in a file first."));
  QPushButton* discard = box.addButton(tr("Discard Changes"), QMessageBox::DestructiveRole);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  return box.clickedButton() == discard;
}

void SetupPage::choosePreset(int index) {
  const QString name = m_presetBox->itemData(index).toString();
  if (name == m_preset && !m_modified) return;
  if (!confirmDiscardEdits(tr("Preset %1").arg(name))) {
    // The chooser goes back to what the settings still are.
    m_presetBox->setCurrentIndex(m_preset.isEmpty() ? -1 : m_presetBox->findData(m_preset));
    return;
  }
  if (!applyPreset(name)) return;
  // Presets that do not say what to train on are meant for the user's own footage (demo
  // alone says "synthetic"): ask for it now rather than train on procedural clips unasked.
  const nlohmann::ordered_json overrides = core::presetOverrides(name.toStdString());
  const bool saysData = overrides.contains("data") && overrides["data"].contains("type");
  if (!saysData) askForDataFolder();
}

void SetupPage::askForDataFolder() {
  const Json frames = value(QStringLiteral("data.num_frames"));
  const bool images = frames.is_number_integer() && frames.get<int>() == 1;
  QFileDialog dialog(this, images ? tr("Folder of your images for %1").arg(m_preset)
                                  : tr("Folder of your videos for %1").arg(m_preset));
  dialog.setObjectName(QStringLiteral("dataFolderDialog"));
  dialog.setFileMode(QFileDialog::Directory);
  dialog.setOption(QFileDialog::ShowDirsOnly);
  if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) {
    showMessage(tr("%1 trains on procedural clips until you choose a folder of %2 "
                   "(Dataset \u25b8 Source)")
                    .arg(m_preset, images ? tr("images") : tr("videos")),
                false);
    return;
  }
  setValue(QStringLiteral("data.type"), images ? "images" : "videos");
  setValue(QStringLiteral("data.path"), dialog.selectedFiles().front().toStdString());
  showPanel(Panel::Dataset);
}

void SetupPage::showMessage(const QString& text, bool error) {
  // The line keeps its place when empty: a message appearing must not move the fields.
  m_message->setToolTip(text);
  m_message->setText(m_message->fontMetrics().elidedText(text, Qt::ElideMiddle,
                                                         std::max(200, m_message->width())));
  m_messageText = text;
  setColor(m_message, error ? widgets::colours::error() : widgets::colours::ok());
}

void SetupPage::refreshSourceLabel() {
  QString text;
  if (!m_sourceFile.isEmpty()) {
    text = tr("File %1").arg(QDir::toNativeSeparators(m_sourceFile));
  } else if (!m_preset.isEmpty()) {
    text = tr("Preset \u201c%1\u201d").arg(m_preset);
    const int index = m_presetBox->findData(m_preset);
    const QString description = m_presetBox->itemData(index, Qt::ToolTipRole).toString();
    if (!description.isEmpty()) text += QStringLiteral(": ") + description;
  } else {
    text = tr("Defaults");
  }
  if (m_modified) text += tr(" \u2014 modified");
  m_source->setText(text);
  m_source->setToolTip(text);
  m_source->setForegroundRole(QPalette::PlaceholderText);
}

void SetupPage::chooseAndLoad() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Load configuration"),
      m_sourceFile.isEmpty() ? QDir::currentPath() : QFileInfo(m_sourceFile).path(),
      tr("JSON files (*.json);;All files (*)"));
  if (!path.isEmpty()) loadConfigFile(path);
}

void SetupPage::chooseAndSave() {
  QString start = m_sourceFile;
  if (start.isEmpty()) {
    start = QDir::current().filePath((m_preset.isEmpty() ? QStringLiteral("config") : m_preset) +
                                     QStringLiteral(".json"));
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Save configuration"), start,
                                                    tr("JSON files (*.json);;All files (*)"));
  if (!path.isEmpty()) saveConfigFile(path);
}

// -- Run directory and command line ------------------------------------------------------------

QString SetupPage::runDirectory() const {
  const QString folder = m_runsFolder->text().trimmed();
  const QString name = m_runName->text().trimmed();
  return QDir::cleanPath(QDir::current().absoluteFilePath(QDir(folder).filePath(name)));
}

QString SetupPage::launchConfigPath() const {
  return QDir::cleanPath(runDirectory() + QStringLiteral(".config.json"));
}

bool SetupPage::writeLaunchConfig(QString* error) const {
  const QString path = launchConfigPath();
  if (!QDir().mkpath(QFileInfo(path).path())) {
    if (error != nullptr) *error = tr("cannot create %1").arg(QFileInfo(path).path());
    return false;
  }
  return m_config->save(path, error);
}

LaunchRequest SetupPage::launchRequest() const {
  LaunchRequest request;
  request.trainer = m_trainerPath;  // empty when none was found
  request.setConfigFile(launchConfigPath());
  request.setRunDir(runDirectory());
  request.command.control_stdin = true;
  return request;
}

QString SetupPage::commandLineText() const {
  LaunchRequest request = launchRequest();
  if (request.trainer.isEmpty())
    request.trainer = QString::fromLatin1(TrainerLocation::kExecutableName);
  return shellCommandLine(request);
}

void SetupPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshProblemList();  // the run directory may have been created since
}

void SetupPage::refreshCommandLine() {
  if (m_commandLine == nullptr) return;
  m_commandLine->setPlainText(commandLineText());
  const auto intValue = [this](const char* path, int fallback) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_number_integer() ? v.get<int>() : fallback;
  };
  const int nproc = intValue("distributed.nproc_per_node", 1);
  const int nnodes = intValue("distributed.nnodes", 1);
  const Json strategy = value(QStringLiteral("distributed.strategy"));
  const QString strategyName =
      strategy.is_string() ? QString::fromStdString(strategy.get<std::string>()) : QString();
  QStringList notes;
  if (m_trainerPath.isEmpty()) {
    notes << tr(
        "No trainer was found: the command names <i>tokenbench-trainer</i> as it would "
        "be found on PATH.");
  }
  if (strategyName == QLatin1String("none") || nproc * nnodes <= 1) {
    notes << tr("One process trains on this machine.");
  } else {
    notes << tr("The trainer starts %n rank process(es) on this node", nullptr, nproc) +
                 tr(" (%1 in all, %2).").arg(nproc * nnodes).arg(strategyName);
  }
  if (nnodes > 1) {
    notes << tr("With %1 nodes, run the same command on every node with its own "
                "<i>distributed.node_rank</i> (0 \u2026 %2) and the same master address and "
                "port.")
                 .arg(nnodes)
                 .arg(nnodes - 1);
  }
  notes << tr(
      "Under torchrun, Slurm <i>srun</i> or <i>mpirun</i> the trainer takes its rank "
      "from their environment variables instead.");
  m_commandNote->setText(notes.join(QStringLiteral("<br>")));
}

void SetupPage::suggestRunName() {
  if (!m_runNameAuto) return;
  QString base = m_preset;
  if (base.isEmpty() && !m_sourceFile.isEmpty()) {
    // A run's own config.json (Monitor > Configuration > New Run): named after the run.
    const QFileInfo source(m_sourceFile);
    base = source.fileName() == QLatin1String("config.json") &&
                   RunSummaryReader::isRunDirectory(source.path())
               ? source.dir().dirName()
               : source.completeBaseName();
  }
  if (base.isEmpty()) base = QStringLiteral("run");
  const QString stem = base + QLatin1Char('-') +
                       QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  // Two runs started within a second get -2, -3, ...
  const QDir runs(QDir::current().absoluteFilePath(m_runsFolder->text().trimmed()));
  QString name = stem;
  for (int n = 2; runs.exists(name) || name == m_runName->text(); ++n) {
    name = stem + QLatin1Char('-') + QString::number(n);
  }
  m_runName->setText(name);
}

void SetupPage::chooseRunsFolder() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Runs folder"), m_runsFolder->text());
  if (folder.isEmpty()) return;
  m_runsFolder->setText(folder);
  refreshProblemList();
  refreshCommandLine();
  Q_EMIT configChanged();
}

// -- Navigation --------------------------------------------------------------------------------

int SetupPage::panelOf(const QString& path) const {
  const QString section = path.section(QLatin1Char('.'), 0, 0);
  if (section == QLatin1String("data")) return static_cast<int>(Panel::Dataset);
  if (section == QLatin1String("model")) return static_cast<int>(Panel::Model);
  if (section == QLatin1String("distributed")) return static_cast<int>(Panel::Distributed);
  return static_cast<int>(Panel::Training);
}

void SetupPage::showPanel(Panel panel) { m_tabs->setCurrentIndex(static_cast<int>(panel)); }

SetupPage::Panel SetupPage::currentPanel() const {
  return static_cast<Panel>(m_tabs->currentIndex());
}

bool SetupPage::focusField(const QString& path) {
  if (path == kRunDirPath) {
    m_runName->setFocus(Qt::OtherFocusReason);
    m_runName->selectAll();
    return true;
  }
  int index = -1;
  const QString key = keyOf(path, &index);
  QWidget* target = nullptr;
  if (key == QLatin1String("model.layers")) {
    m_magvitGroup->setVisible(true);
    target = m_layers;
  } else if (ConfigFieldEditor* editor = m_editors.value(key)) {
    if (QGroupBox* group = m_groupOf.value(key)) group->setVisible(true);
    target = editor;
  }
  if (target == nullptr) return false;
  const int panel = panelOf(key);
  m_tabs->setCurrentIndex(panel);
  m_scrolls.value(panel)->ensureWidgetVisible(target, 40, 40);
  if (target == m_layers) {
    if (index >= 0) m_layers->setCurrentRow(index);
    m_layers->setFocus(Qt::OtherFocusReason);
  } else {
    static_cast<ConfigFieldEditor*>(target)->focusInput();
  }
  return true;
}

ConfigFieldEditor* SetupPage::fieldEditor(const QString& path) const {
  return m_editors.value(path);
}

QList<ConfigFieldEditor*> SetupPage::fieldEditors() const { return m_editors.values(); }

// -- Setters MainWindow calls ------------------------------------------------------------------

void SetupPage::setConfigPath(const QString& path) {
  if (!path.isEmpty()) loadConfigFile(path);
}

void SetupPage::setRunDirectory(const QString& path) {
  if (path.isEmpty()) return;
  const QFileInfo info(QDir::cleanPath(path));
  const bool launchedFromHere = info.absoluteFilePath() == runDirectory();
  m_runsFolder->setText(QDir::toNativeSeparators(info.absolutePath()));
  if (launchedFromHere ||
      QFileInfo::exists(pathText(runDirectoryAt(info.absoluteFilePath()).configFile()))) {
    // A run (just launched from this page, or opened to watch it): the next run goes beside
    // it under a fresh name, never into it.
    if (launchedFromHere || m_runName->text().trimmed().isEmpty() ||
        m_runName->text() == info.fileName()) {
      m_runNameAuto = true;
      suggestRunName();
    }
  } else {
    m_runName->setText(info.fileName());
    m_runNameAuto = false;
  }
  refreshProblemList();
  refreshCommandLine();
  Q_EMIT configChanged();
}

void SetupPage::setTrainerLocation(const TrainerLocation& trainer) {
  if (trainer.found()) {
    m_trainerText = tr("%1 (%2)").arg(trainer.path, trainer.origin);
  } else if (!trainer.problem.isEmpty()) {
    m_trainerText = tr("not found: %1").arg(trainer.problem);
  } else {
    m_trainerText = tr("not searched");
  }
  m_trainer->setText(m_trainerText);
  m_trainerPath = trainer.path;
  m_modelQuery->setProgram(trainer.path);
  m_dataQuery->setProgram(trainer.path);
  m_lastModelInput.clear();
  m_lastDataInput.clear();
  refreshCommandLine();
  requestModelInfo();
  requestDataInfo();
}

QString SetupPage::configText() const { return m_source->text(); }

QString SetupPage::runDirectoryText() const { return runDirectory(); }

QString SetupPage::trainerText() const { return m_trainerText; }

}  // namespace tb::app
