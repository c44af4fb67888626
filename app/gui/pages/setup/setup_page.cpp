#include "app/gui/pages/setup/setup_page.h"

#include "app/control/trainer_location.h"
#include "app/control/trainer_query.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/page_header.h"
#include "app/gui/pages/setup/run_destination.h"
#include "app/gui/pages/setup/trainer_checks.h"
#include "core/presets.h"
#include "widgets/layer_stack_editor.h"
#include "widgets/wrapping_list.h"

#include <QLabel>
#include <QListWidget>
#include <QTabWidget>
#include <QVBoxLayout>

#include <utility>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

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

}  // namespace

SetupPage::SetupPage(QWidget* parent)
    : QWidget(parent), m_config(new ConfigDocument(this)), m_checks(new TrainerChecks(this)) {
  createEditors();
  buildTopBar();
  buildProblemList();
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

  m_checks->setViews(m_modelInfo, m_dataInfo);
  // What data-info finds wrong is a problem like any other: a launch would fail on it.
  connect(m_checks->dataQuery(), &TrainerQuery::busy, this, [this] { setDataProblem({}); });
  connect(m_checks, &TrainerChecks::dataChecked, this, &SetupPage::setDataProblem);

  m_trainerText = tr("not searched");
  m_trainer->setText(m_trainerText);
  m_checks->setTrainer(m_trainerPath, m_trainerText);
  const std::vector<core::PresetInfo> all = core::presets();
  if (!all.empty()) applyPreset(QString::fromStdString(all.front().name));
}

// The trainer's checks end (and their preview folder goes) with m_checks, a child.
SetupPage::~SetupPage() = default;

// -- The document ------------------------------------------------------------------------------

QString SetupPage::configJsonText() const { return m_config->text(); }

// After the whole document was replaced (a file, a preset): editors, checks and queries follow.
void SetupPage::documentReplaced() {
  m_checks->forgetInputs();
  showDocumentInEditors();
  revalidate();
  refreshAfterChange();
}

// What follows from the document's values: visible groups, greyed keys, the source line, the
// command line, the trainer's model and data checks, and the page's listeners.
void SetupPage::refreshAfterChange() {
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
  revalidate();
  Q_UNUSED(changedPath);
  refreshAfterChange();
}

// -- The trainer's checks ----------------------------------------------------------------------

void SetupPage::requestModelInfo() { m_checks->checkModel(m_config->json(), m_configErrors); }

void SetupPage::requestDataInfo() {
  m_checks->checkData(m_config->json(), m_configErrors);
  refreshProblemList();  // a check that was under way may have been called off
}

TrainerQuery* SetupPage::modelInfoQuery() const { return m_checks->modelQuery(); }

TrainerQuery* SetupPage::dataInfoQuery() const { return m_checks->dataQuery(); }

// -- Setters MainWindow calls ------------------------------------------------------------------

void SetupPage::setConfigPath(const QString& path) {
  if (!path.isEmpty()) loadConfigFile(path);
}

void SetupPage::setRunDirectory(const QString& path) {
  if (path.isEmpty()) return;
  m_destination->placeBeside(path);
  refreshProblemList();
  refreshCommandLine();
  Q_EMIT configChanged();
}

// The runs folder or the run name, edited by the user.
void SetupPage::destinationEdited() {
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
  m_checks->setTrainer(m_trainerPath, m_trainerText);
  m_checks->forgetInputs();
  refreshCommandLine();
  requestModelInfo();
  requestDataInfo();
}

QString SetupPage::configText() const { return m_source->text(); }

QString SetupPage::runDirectoryText() const { return runDirectory(); }

QString SetupPage::trainerText() const { return m_trainerText; }

}  // namespace tb::app
