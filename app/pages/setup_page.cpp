#include "app/pages/setup_page.h"

#include "app/pages/config_field_editor.h"
#include "app/pages/data_info_view.h"
#include "app/pages/model_info_view.h"
#include "app/pages/page_header.h"
#include "app/trainer_location.h"
#include "app/trainer_query.h"
#include "core/config_io.h"
#include "core/presets.h"
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
#include <QPalette>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
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

const QColor kErrorColor(0xc6, 0x28, 0x28);
const QColor kOkColor(0x2e, 0x7d, 0x32);
constexpr int kPreviewClips = 4;
const QString kRunDirPath = QStringLiteral("run_dir");

// Which group of which panel a key is shown in. Keys not listed fall into their section's
// "other" group, so a key added to the schema always gets an editor somewhere.
struct GroupRule {
  const char* title;
  const char* prefix;  // a key path, or a section path ending with '.'
};

const std::vector<GroupRule>& groupRules() {
  static const std::vector<GroupRule> rules = {
      {"Source", "data.type"},
      {"Source", "data.path"},
      {"Source", "data.synthetic_clips"},
      {"Source", "data.valid_fraction"},
      {"Clips", "data.image_size"},
      {"Clips", "data.num_frames"},
      {"Clips", "data.frame_stride"},
      {"Clips", "data.clip_start"},
      {"Clips", "data.crop"},
      {"Clips", "data.hflip"},
      {"Loading", "data.workers"},
      {"Loading", "data.prefetch"},
      {"Tokenizer", "model.kind"},
      {"Tokenizer", "model.channels"},
      {"Quantizer", "model.quantizer."},
      {"VQGAN architecture", "model.vqgan."},
      {"Discriminator", "model.discriminator."},
      {"MAGVIT-v2 architecture", "model."},
      {"Loss", "loss."},
      {"Optimisation", "train.seed"},
      {"Optimisation", "train.batch_size"},
      {"Optimisation", "train.grad_accum"},
      {"Optimisation", "train.lr"},
      {"Optimisation", "train.discr_lr"},
      {"Optimisation", "train.weight_decay"},
      {"Optimisation", "train.adam_beta1"},
      {"Optimisation", "train.adam_beta2"},
      {"Optimisation", "train.grad_clip"},
      {"Schedule", "train.warmup_steps"},
      {"Schedule", "train.max_steps"},
      {"Schedule", "train.schedule"},
      {"Schedule", "train.min_lr_ratio"},
      {"Schedule", "train.time_budget_s"},
      {"Precision and memory", "train.precision"},
      {"Precision and memory", "train.threads"},
      {"Precision and memory", "train.activation_checkpointing"},
      {"EMA", "train.ema"},
      {"Logging, validation and checkpoints", "train.log_every"},
      {"Logging, validation and checkpoints", "train.valid_"},
      {"Logging, validation and checkpoints", "train.sample_every"},
      {"Logging, validation and checkpoints", "train.checkpoint_"},
      {"Recovery", "train.nan_"},
      {"Processes", "distributed.strategy"},
      {"Processes", "distributed.backend"},
      {"Processes", "distributed.nproc_per_node"},
      {"Processes", "distributed.nnodes"},
      {"Processes", "distributed.node_rank"},
      {"Processes", "distributed.gpu_ids"},
      {"Rendezvous", "distributed.master_"},
      {"Rendezvous", "distributed.timeout_s"},
      {"Gradient exchange", "distributed.bucket_mb"},
  };
  return rules;
}

QString groupTitleFor(const QString& path) {
  for (const GroupRule& rule : groupRules()) {
    const QString prefix = QString::fromLatin1(rule.prefix);
    if (path == prefix || (path.startsWith(prefix) && (prefix.endsWith(QLatin1Char('.')) ||
                                                       prefix.endsWith(QLatin1Char('_')) ||
                                                       prefix == QLatin1String("train.ema")))) {
      return QString::fromLatin1(rule.title);
    }
  }
  return QStringLiteral("Other: ") + path.section(QLatin1Char('.'), 0, 0);
}

Json::json_pointer pointerOf(const QString& path) {
  std::string pointer;
  for (const QString& part : path.split(QLatin1Char('.'))) pointer += "/" + part.toStdString();
  return Json::json_pointer(pointer);
}

// `overlay` written over `base`: objects merge key by key (base's order first, new keys after),
// anything else replaces.
void mergeOver(Json& base, const Json& overlay) {
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    auto existing = base.find(it.key());
    if (existing != base.end() && existing->is_object() && it->is_object()) {
      mergeOver(*existing, *it);
    } else {
      base[it.key()] = *it;
    }
  }
}

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

QScrollArea* scrollable(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return scroll;
}

QLabel* mutedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

void setColor(QLabel* label, const QColor& color) {
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, color);
  label->setPalette(palette);
  label->setForegroundRole(QPalette::WindowText);
}

}  // namespace

SetupPage::SetupPage(QWidget* parent) : QWidget(parent) {
  m_modelQuery = new TrainerQuery(this);
  m_dataQuery = new TrainerQuery(this);
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
  layout->addWidget(m_summary);
  layout->addWidget(m_problems);
  layout->addWidget(m_tabs, 1);

  connect(m_modelQuery, &TrainerQuery::busy, m_modelInfo, &ModelInfoView::setComputing);
  connect(m_modelQuery, &TrainerQuery::succeeded, m_modelInfo, &ModelInfoView::setResult);
  connect(m_modelQuery, &TrainerQuery::failed, m_modelInfo,
          [this](const QString& message) { m_modelInfo->setError(message); });
  connect(m_dataQuery, &TrainerQuery::busy, m_dataInfo, &DataInfoView::setComputing);
  connect(m_dataQuery, &TrainerQuery::succeeded, m_dataInfo, &DataInfoView::setResult);
  connect(m_dataQuery, &TrainerQuery::failed, m_dataInfo,
          [this](const QString& message) { m_dataInfo->setError(message); });

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

// -- Building ----------------------------------------------------------------------------------

void SetupPage::createEditors() {
  const QStringList special = specialKeys();
  for (const core::FieldInfo& field : core::configSchema()) {
    const QString path = QString::fromStdString(field.path);
    if (special.contains(path)) continue;
    auto* editor = new ConfigFieldEditor(field, this);
    if (path == QLatin1String("data.path")) editor->setBrowse(ConfigFieldEditor::Browse::Directory);
    if (path == QLatin1String("loss.lpips_backbone") || path == QLatin1String("loss.lpips_lin")) {
      editor->setBrowse(ConfigFieldEditor::Browse::File);
    }
    connect(editor, &ConfigFieldEditor::edited, this, &SetupPage::onFieldEdited);
    m_editors.insert(path, editor);
  }
  m_layers = new widgets::LayerStackEditor(this);
  m_layers->setObjectName(QStringLiteral("layerStackEditor"));
  connect(m_layers, &widgets::LayerStackEditor::layersChanged, this, &SetupPage::onLayersEdited);
}

QGroupBox* SetupPage::fieldGroup(const QString& title, const QStringList& paths, QWidget* parent) {
  auto* group = new QGroupBox(title, parent);
  group->setObjectName(QStringLiteral("group:") + title);
  auto* form = new QFormLayout(group);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  form->setHorizontalSpacing(14);
  form->setVerticalSpacing(4);
  for (const QString& path : paths) {
    ConfigFieldEditor* editor = m_editors.value(path);
    if (editor == nullptr) continue;
    auto* label = new QLabel(editor->labelText(), group);
    label->setObjectName(QStringLiteral("label:") + path);
    label->setToolTip(ConfigFieldEditor::describe(editor->field()));
    m_labels.insert(path, label);
    label->setBuddy(editor->input());
    editor->setParent(group);
    form->addRow(label, editor);
    m_groupOf.insert(path, group);
  }
  return group;
}

void SetupPage::buildTopBar() {
  auto* bar = new QWidget(this);
  m_bar = bar;
  bar->setObjectName(QStringLiteral("setupBar"));

  m_presetBox = new QComboBox(bar);
  m_presetBox->setObjectName(QStringLiteral("presetBox"));
  m_presetBox->setPlaceholderText(tr("(from a file)"));
  m_presetBox->setMinimumWidth(170);
  for (const core::PresetInfo& preset : core::presets()) {
    const QString name = QString::fromStdString(preset.name);
    m_presetBox->addItem(name, name);
    m_presetBox->setItemData(m_presetBox->count() - 1, QString::fromStdString(preset.description),
                             Qt::ToolTipRole);
  }
  m_presetBox->setToolTip(tr("Start from a compiled-in preset (replaces every setting)"));
  connect(m_presetBox, &QComboBox::activated, this,
          [this](int index) { applyPreset(m_presetBox->itemData(index).toString()); });

  m_loadButton = new QPushButton(tr("Load JSON\u2026"), bar);
  m_loadButton->setObjectName(QStringLiteral("loadButton"));
  m_loadButton->setToolTip(
      tr("Replace the configuration with a JSON file; keys it lacks take "
         "their defaults"));
  connect(m_loadButton, &QPushButton::clicked, this, &SetupPage::chooseAndLoad);
  m_saveButton = new QPushButton(tr("Save JSON\u2026"), bar);
  m_saveButton->setObjectName(QStringLiteral("saveButton"));
  m_saveButton->setToolTip(tr("Write the complete configuration, every default spelled out"));
  connect(m_saveButton, &QPushButton::clicked, this, &SetupPage::chooseAndSave);

  m_source = new QLabel(bar);
  m_source->setObjectName(QStringLiteral("configSource"));
  m_source->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_message = new QLabel(bar);
  m_message->setObjectName(QStringLiteral("loadSaveMessage"));
  m_message->setWordWrap(true);
  m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_message->hide();

  m_runsFolder = new QLineEdit(bar);
  m_runsFolder->setObjectName(QStringLiteral("runsFolder"));
  m_runsFolder->setText(QDir::current().absoluteFilePath(QStringLiteral("runs")));
  m_runsFolder->setToolTip(tr("Folder that holds run directories"));
  auto* browseRuns = new QToolButton(bar);
  browseRuns->setText(tr("Browse\u2026"));
  connect(browseRuns, &QToolButton::clicked, this, &SetupPage::chooseRunsFolder);
  m_runName = new QLineEdit(bar);
  m_runName->setObjectName(QStringLiteral("runName"));
  m_runName->setToolTip(tr("Name of the run directory inside the runs folder"));
  m_runName->setMinimumWidth(220);
  connect(m_runsFolder, &QLineEdit::textEdited, this, [this] {
    refreshProblemList();
    refreshCommandLine();
    Q_EMIT configChanged();
  });
  connect(m_runName, &QLineEdit::textEdited, this, [this] {
    m_runNameAuto = false;
    refreshProblemList();
    refreshCommandLine();
    Q_EMIT configChanged();
  });

  m_trainer = new QLabel(bar);
  m_trainer->setObjectName(QStringLiteral("trainerValue"));
  m_trainer->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_trainer->setForegroundRole(QPalette::PlaceholderText);

  auto* grid = new QGridLayout(bar);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(8);
  grid->setVerticalSpacing(6);
  grid->addWidget(new QLabel(tr("Preset:"), bar), 0, 0);
  auto* row0 = new QHBoxLayout;
  row0->setSpacing(8);
  row0->addWidget(m_presetBox);
  row0->addSpacing(8);
  row0->addWidget(m_loadButton);
  row0->addWidget(m_saveButton);
  row0->addSpacing(12);
  row0->addWidget(m_source, 1);
  grid->addLayout(row0, 0, 1);
  grid->addWidget(new QLabel(tr("Runs folder:"), bar), 1, 0);
  auto* row1 = new QHBoxLayout;
  row1->setSpacing(8);
  row1->addWidget(m_runsFolder, 2);
  row1->addWidget(browseRuns);
  row1->addSpacing(12);
  row1->addWidget(new QLabel(tr("Run name:"), bar));
  row1->addWidget(m_runName, 1);
  grid->addLayout(row1, 1, 1);
  grid->addWidget(new QLabel(tr("Trainer:"), bar), 2, 0);
  grid->addWidget(m_trainer, 2, 1);
  grid->addWidget(m_message, 3, 1);
  grid->setColumnStretch(1, 1);

  m_summary = new QLabel(this);
  m_summary->setObjectName(QStringLiteral("validationSummary"));
  QFont bold = m_summary->font();
  bold.setBold(true);
  m_summary->setFont(bold);

  m_problems = new QListWidget(this);
  m_problems->setObjectName(QStringLiteral("problemList"));
  m_problems->setToolTip(tr("Click a problem to go to its field"));
  m_problems->setSelectionMode(QAbstractItemView::SingleSelection);
  m_problems->setUniformItemSizes(true);
  m_problems->setIconSize(QSize(16, 16));
  connect(m_problems, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { focusField(item->data(Qt::UserRole).toString()); });
  connect(m_problems, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { focusField(item->data(Qt::UserRole).toString()); });
}

namespace {

// A panel's scrolled content: two columns of group boxes. Returns the content widget; the
// columns are named "column0" and "column1".
QWidget* twoColumns(QVBoxLayout** left, QVBoxLayout** right, int leftStretch = 1,
                    int rightStretch = 1) {
  auto* content = new QWidget;
  auto* row = new QHBoxLayout(content);
  row->setContentsMargins(0, 12, 12, 12);
  row->setSpacing(16);
  *left = new QVBoxLayout;
  *right = new QVBoxLayout;
  (*left)->setObjectName(QStringLiteral("column0"));
  (*right)->setObjectName(QStringLiteral("column1"));
  for (QVBoxLayout* column : {*left, *right}) {
    column->setSpacing(12);
    column->addStretch(1);
  }
  row->addLayout(*left, leftStretch);
  row->addLayout(*right, rightStretch);
  return content;
}

void addToColumn(QVBoxLayout* column, QWidget* widget) {
  column->insertWidget(column->count() - 1, widget);
}

// Gives the labels of every form in `column` the same width, so that fields line up from one
// group box to the next.
void alignLabels(QVBoxLayout* column) {
  QList<QWidget*> labels;
  int width = 0;
  for (int i = 0; i < column->count(); ++i) {
    QWidget* group = column->itemAt(i)->widget();
    auto* form = group == nullptr ? nullptr : qobject_cast<QFormLayout*>(group->layout());
    if (form == nullptr) continue;
    for (int row = 0; row < form->rowCount(); ++row) {
      QLayoutItem* item = form->itemAt(row, QFormLayout::LabelRole);
      if (item == nullptr || item->widget() == nullptr) continue;
      labels << item->widget();
      width = std::max(width, item->widget()->sizeHint().width());
    }
  }
  for (QWidget* label : labels) label->setMinimumWidth(width);
}

QStringList pathsInGroup(const QString& title, const QString& section) {
  QStringList paths;
  const QStringList special = SetupPage::specialKeys();
  for (const core::FieldInfo& field : core::configSchema()) {
    const QString path = QString::fromStdString(field.path);
    if (special.contains(path) || !path.startsWith(section + QLatin1Char('.'))) continue;
    if (groupTitleFor(path) == title) paths << path;
  }
  return paths;
}

}  // namespace

void SetupPage::buildPanels() {
  m_tabs = new QTabWidget(this);
  m_tabs->setObjectName(QStringLiteral("setupTabs"));
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(buildDatasetPanel(), tr("Dataset"));
  m_tabs->addTab(buildModelPanel(), tr("Model"));
  m_tabs->addTab(buildTrainingPanel(), tr("Training && loss"));
  m_tabs->addTab(buildDistributedPanel(), tr("Distributed"));

  // Keys the layout above did not place (added to the schema later) still get an editor.
  std::map<int, std::map<QString, QStringList>> leftovers;  // panel -> group -> paths
  for (const core::FieldInfo& field : core::configSchema()) {
    const QString path = QString::fromStdString(field.path);
    if (m_editors.contains(path) && !m_groupOf.contains(path)) {
      leftovers[panelOf(path)][groupTitleFor(path)] << path;
    }
  }
  for (const auto& [panel, groups] : leftovers) {
    auto* scroll = m_scrolls.value(panel);
    auto* column = scroll->widget()->findChild<QVBoxLayout*>(QStringLiteral("column0"));
    for (const auto& [title, paths] : groups) {
      column->insertWidget(column->count() - 1, fieldGroup(title, paths, scroll->widget()));
    }
  }
  for (QScrollArea* scroll : std::as_const(m_scrolls)) {
    for (const char* name : {"column0", "column1"}) {
      alignLabels(scroll->widget()->findChild<QVBoxLayout*>(QString::fromLatin1(name)));
    }
  }
}

QWidget* SetupPage::buildDatasetPanel() {
  QVBoxLayout* left = nullptr;
  QVBoxLayout* right = nullptr;
  QWidget* content = twoColumns(&left, &right, 5, 6);
  for (const char* title : {"Source", "Clips", "Loading"}) {
    addToColumn(left, fieldGroup(QString::fromLatin1(title),
                                 pathsInGroup(QString::fromLatin1(title), QStringLiteral("data")),
                                 content));
  }

  auto* contents = new QGroupBox(tr("What the trainer finds"), content);
  contents->setObjectName(QStringLiteral("group:Dataset contents"));
  m_dataInfo = new DataInfoView(contents);
  m_dataInfo->setObjectName(QStringLiteral("dataInfoView"));
  auto* rescan = new QToolButton(contents);
  rescan->setObjectName(QStringLiteral("rescanButton"));
  rescan->setText(tr("Scan again"));
  rescan->setToolTip(tr("Run data-info again (after files changed on disk)"));
  connect(rescan, &QToolButton::clicked, this, [this] {
    m_lastDataInput.clear();
    requestDataInfo();
  });
  auto* contentsLayout = new QVBoxLayout(contents);
  auto* rescanRow = new QHBoxLayout;
  rescanRow->addWidget(
      mutedLabel(tr("tokenbench-trainer data-info, run after each change"), contents), 1);
  rescanRow->addWidget(rescan);
  contentsLayout->addLayout(rescanRow);
  contentsLayout->addWidget(m_dataInfo);
  addToColumn(right, contents);

  QScrollArea* scroll = scrollable(content);
  m_scrolls << scroll;
  return scroll;
}

QWidget* SetupPage::buildModelPanel() {
  QVBoxLayout* left = nullptr;
  QVBoxLayout* right = nullptr;
  QWidget* content = twoColumns(&left, &right, 6, 5);

  addToColumn(left, fieldGroup(tr("Tokenizer"),
                               pathsInGroup(QStringLiteral("Tokenizer"), QStringLiteral("model")),
                               content));

  m_magvitGroup = fieldGroup(
      QStringLiteral("MAGVIT-v2 architecture"),
      pathsInGroup(QStringLiteral("MAGVIT-v2 architecture"), QStringLiteral("model")), content);
  auto* form = qobject_cast<QFormLayout*>(m_magvitGroup->layout());
  auto* layersLabel =
      new QLabel(tr("Encoder layers, input first (the decoder mirrors them; drag to reorder):"),
                 m_magvitGroup);
  layersLabel->setToolTip(ConfigFieldEditor::describe([] {
    for (const core::FieldInfo& f : core::configSchema()) {
      if (f.path == "model.layers") return f;
    }
    return core::FieldInfo{"model.layers", core::FieldType::LayerList, {}, core::FieldSpec("")};
  }()));
  layersLabel->setObjectName(QStringLiteral("label:model.layers"));
  m_layers->setParent(m_magvitGroup);
  m_layers->setMinimumHeight(220);
  // The layer stack spans the group's width; the generated fields follow below it.
  form->insertRow(0, layersLabel);
  form->insertRow(1, m_layers);
  m_groupOf.insert(QStringLiteral("model.layers"), m_magvitGroup);
  addToColumn(left, m_magvitGroup);

  m_vqganGroup = fieldGroup(
      QStringLiteral("VQGAN architecture"),
      pathsInGroup(QStringLiteral("VQGAN architecture"), QStringLiteral("model")), content);
  addToColumn(left, m_vqganGroup);

  auto* summary = new QGroupBox(tr("Model summary"), content);
  summary->setObjectName(QStringLiteral("group:Model summary"));
  m_modelInfo = new ModelInfoView(summary);
  m_modelInfo->setObjectName(QStringLiteral("modelInfoView"));
  auto* summaryLayout = new QVBoxLayout(summary);
  summaryLayout->addWidget(m_modelInfo);
  addToColumn(right, summary);
  addToColumn(right, fieldGroup(tr("Quantizer"),
                                pathsInGroup(QStringLiteral("Quantizer"), QStringLiteral("model")),
                                content));
  addToColumn(
      right,
      fieldGroup(tr("Discriminator"),
                 pathsInGroup(QStringLiteral("Discriminator"), QStringLiteral("model")), content));

  QScrollArea* scroll = scrollable(content);
  m_scrolls << scroll;
  return scroll;
}

QWidget* SetupPage::buildTrainingPanel() {
  QVBoxLayout* left = nullptr;
  QVBoxLayout* right = nullptr;
  QWidget* content = twoColumns(&left, &right);
  for (const char* title : {"Optimisation", "Schedule", "Precision and memory", "EMA"}) {
    addToColumn(left, fieldGroup(QString::fromLatin1(title),
                                 pathsInGroup(QString::fromLatin1(title), QStringLiteral("train")),
                                 content));
  }
  addToColumn(right,
              fieldGroup(tr("Loss"), pathsInGroup(QStringLiteral("Loss"), QStringLiteral("loss")),
                         content));
  for (const char* title : {"Logging, validation and checkpoints", "Recovery"}) {
    addToColumn(right, fieldGroup(QString::fromLatin1(title),
                                  pathsInGroup(QString::fromLatin1(title), QStringLiteral("train")),
                                  content));
  }
  QScrollArea* scroll = scrollable(content);
  m_scrolls << scroll;
  return scroll;
}

QWidget* SetupPage::buildDistributedPanel() {
  QVBoxLayout* left = nullptr;
  QVBoxLayout* right = nullptr;
  QWidget* content = twoColumns(&left, &right, 5, 6);
  for (const char* title : {"Processes", "Rendezvous", "Gradient exchange"}) {
    addToColumn(left,
                fieldGroup(QString::fromLatin1(title),
                           pathsInGroup(QString::fromLatin1(title), QStringLiteral("distributed")),
                           content));
  }

  auto* launch = new QGroupBox(tr("Command line"), content);
  launch->setObjectName(QStringLiteral("group:Command line"));
  auto* intro = mutedLabel(tr("What Launch runs for these settings. The configuration is written "
                              "to the --config file first; the trainer starts the rank processes "
                              "itself."),
                           launch);
  m_commandLine = new QPlainTextEdit(launch);
  m_commandLine->setObjectName(QStringLiteral("commandLine"));
  m_commandLine->setReadOnly(true);
  m_commandLine->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_commandLine->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  m_commandLine->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  m_commandLine->setFixedHeight(m_commandLine->fontMetrics().lineSpacing() * 5 + 12);
  m_copyCommand = new QToolButton(launch);
  m_copyCommand->setObjectName(QStringLiteral("copyCommandButton"));
  m_copyCommand->setText(tr("Copy"));
  m_copyCommand->setToolTip(tr("Copy the command line to the clipboard"));
  connect(m_copyCommand, &QToolButton::clicked, this,
          [this] { QApplication::clipboard()->setText(commandLineText()); });
  m_commandNote = mutedLabel(QString(), launch);
  m_commandNote->setObjectName(QStringLiteral("commandNote"));
  m_commandNote->setTextFormat(Qt::RichText);

  auto* copyRow = new QHBoxLayout;
  copyRow->addStretch(1);
  copyRow->addWidget(m_copyCommand);
  auto* launchLayout = new QVBoxLayout(launch);
  launchLayout->setSpacing(8);
  launchLayout->addWidget(intro);
  launchLayout->addWidget(m_commandLine);
  launchLayout->addLayout(copyRow);
  launchLayout->addWidget(m_commandNote);
  addToColumn(right, launch);

  QScrollArea* scroll = scrollable(content);
  m_scrolls << scroll;
  return scroll;
}

// -- The document ------------------------------------------------------------------------------

QString SetupPage::configJsonText() const { return QString::fromStdString(m_doc.dump(2) + "\n"); }

void SetupPage::setDocument(Json doc) {
  m_doc = std::move(doc);
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

Json SetupPage::value(const QString& path) const {
  const Json::json_pointer pointer = pointerOf(path);
  return m_doc.contains(pointer) ? m_doc.at(pointer) : Json();
}

void SetupPage::setValue(const QString& path, const Json& value) {
  m_doc[pointerOf(path)] = value;
  if (ConfigFieldEditor* editor = m_editors.value(path)) editor->setValue(value);
  if (path == QLatin1String("model.layers")) m_layers->setLayers(layersFromJson(value));
  documentEdited(path);
}

void SetupPage::onFieldEdited(const QString& path) {
  const ConfigFieldEditor* editor = m_editors.value(path);
  if (editor == nullptr) return;
  m_doc[pointerOf(path)] = editor->value();
  documentEdited(path);
}

void SetupPage::onLayersEdited() {
  m_doc[pointerOf(QStringLiteral("model.layers"))] = layersToJson(m_layers->layers());
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
  const core::ConfigLoad load = core::parseRunConfig(m_doc);
  m_configErrors.clear();
  for (const core::ConfigError& e : load.errors) {
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
  } else if (QFileInfo::exists(QDir(runDirectory()).filePath(QStringLiteral("config.json")))) {
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
  for (const QString& problem : runDirectoryProblems()) {
    errors << kRunDirPath + QStringLiteral(": ") + problem;
  }
  return errors;
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
  for (const QString& problem : runDirectoryProblems()) addItem(kRunDirPath, problem);

  const int count = m_problems->count();
  if (count == 0) {
    m_summary->setText(tr("\u2713  No problems: this configuration can be launched."));
    setColor(m_summary, kOkColor);
  } else {
    m_summary->setText(count == 1
                           ? tr("\u2717  1 problem must be fixed before a launch:")
                           : tr("\u2717  %1 problems must be fixed before a launch:").arg(count));
    setColor(m_summary, kErrorColor);
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
  const QString dataType = text("data.type");
  const QString quantizer = text("model.quantizer.type");
  const QString discriminator = text("model.discriminator.type");
  // Keys that only matter for one choice of another key are greyed out for the others (still
  // editable through a file, still validated, still outlined when bad).
  for (auto it = m_editors.constBegin(); it != m_editors.constEnd(); ++it) {
    const QString& path = it.key();
    bool used = true;
    if (path == QLatin1String("data.path")) used = dataType != QLatin1String("synthetic");
    if (path == QLatin1String("data.synthetic_clips"))
      used = dataType == QLatin1String("synthetic");
    if (path.startsWith(QLatin1String("model.quantizer.fsq_")))
      used = quantizer == QLatin1String("fsq");
    if (path.startsWith(QLatin1String("model.quantizer.vq_")))
      used = quantizer == QLatin1String("vq");
    if (path == QLatin1String("model.discriminator.patchgan_layers")) {
      used = discriminator == QLatin1String("patchgan");
    }
    it.value()->setEnabled(used);
    if (QLabel* label = m_labels.value(path)) label->setEnabled(used);
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
  Json input = m_doc;
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
      if (QString::fromStdString(field.path) == key) input[pointerOf(key)] = field.default_value;
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
  Json input = Json::object();
  for (const char* section : {"version", "data", "model"}) {
    if (m_doc.contains(section)) input[section] = m_doc[section];
  }
  const std::string text = input.dump();
  if (text == m_lastDataInput) return;
  m_lastDataInput = text;
  QStringList dataErrors;
  for (const auto& [path, message] : m_configErrors) {
    if (path.startsWith(QLatin1String("data.")))
      dataErrors << path + QStringLiteral(": ") + message;
  }
  if (!dataErrors.isEmpty()) {
    m_dataQuery->cancel();
    m_dataInfo->setUnavailable(tr("Not scanned until the dataset settings are valid:\n%1")
                                   .arg(dataErrors.join(QLatin1Char('\n'))));
    return;
  }
  if (m_trainerPath.isEmpty()) {
    m_dataQuery->cancel();
    m_dataInfo->setUnavailable(
        tr("No trainer found, so the data cannot be scanned: %1").arg(m_trainerText));
    return;
  }
  QStringList arguments{QStringLiteral("data-info"), QStringLiteral("--config"),
                        QStringLiteral("-")};
  if (m_previewDir->isValid()) {
    arguments << QStringLiteral("--preview") << m_previewDir->path()
              << QStringLiteral("--preview-clips") << QString::number(kPreviewClips);
  }
  m_dataQuery->request(arguments, QByteArray::fromStdString(text));
}

// -- Load, save, presets -----------------------------------------------------------------------

bool SetupPage::loadConfigFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    showMessage(tr("Cannot read %1: %2").arg(path, file.errorString()), true);
    return false;
  }
  const QByteArray bytes = file.readAll();
  Json loaded;
  try {
    loaded = Json::parse(bytes.constData(), bytes.constData() + bytes.size());
  } catch (const Json::exception& e) {
    QString what = QString::fromUtf8(e.what());
    what = what.mid(what.indexOf(QStringLiteral("] ")) + 2);
    showMessage(tr("Not loaded: %1 is not valid JSON (%2)").arg(path, what), true);
    return false;
  }
  if (!loaded.is_object()) {
    showMessage(tr("Not loaded: %1 holds no JSON object").arg(path), true);
    return false;
  }
  Json doc = core::toJson(core::RunConfig{});
  mergeOver(doc, loaded);
  m_preset.clear();
  m_sourceFile = QFileInfo(path).absoluteFilePath();
  m_modified = false;
  m_presetBox->setCurrentIndex(-1);
  suggestRunName();
  setDocument(std::move(doc));
  showMessage(m_configErrors.empty() ? tr("Loaded %1").arg(m_sourceFile)
                                     : tr("Loaded %1 with %2 problem(s), listed below")
                                           .arg(m_sourceFile)
                                           .arg(m_configErrors.size()),
              !m_configErrors.empty());
  return true;
}

bool SetupPage::saveConfigFile(const QString& path) {
  QSaveFile file(path);
  const QByteArray bytes = configJsonText().toUtf8();
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    showMessage(tr("Not saved: cannot write %1 (%2)").arg(path, file.errorString()), true);
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
  m_message->hide();
  setDocument(core::toJson(load.config));
  return true;
}

QString SetupPage::lastMessage() const { return m_message->text(); }

void SetupPage::showMessage(const QString& text, bool error) {
  m_message->setText(text);
  setColor(m_message, error ? kErrorColor : kOkColor);
  m_message->setVisible(!text.isEmpty());
}

void SetupPage::refreshSourceLabel() {
  QString text;
  if (!m_sourceFile.isEmpty()) {
    text = tr("File %1").arg(QDir::toNativeSeparators(m_sourceFile));
  } else if (!m_preset.isEmpty()) {
    text = tr("Preset \u201c%1\u201d").arg(m_preset);
  } else {
    text = tr("Defaults");
  }
  if (m_modified) text += tr(" \u2014 modified");
  m_source->setText(text);
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
  QSaveFile file(path);
  const QByteArray bytes = configJsonText().toUtf8();
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    if (error != nullptr) *error = tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

LaunchRequest SetupPage::launchRequest() const {
  LaunchRequest request;
  request.trainer = m_trainerPath;  // empty when none was found
  request.configFile = launchConfigPath();
  request.runDir = runDirectory();
  request.controlStdin = true;
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
  if (base.isEmpty() && !m_sourceFile.isEmpty()) base = QFileInfo(m_sourceFile).completeBaseName();
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
      QFileInfo::exists(QDir(info.absoluteFilePath()).filePath(QStringLiteral("config.json")))) {
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
