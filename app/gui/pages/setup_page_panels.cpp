// SetupPage, part two: building the panels. Which group box each configuration key goes in,
// the two-column layout of each panel, and the bar above them. The document, validation and
// trainer queries are in setup_page.cpp.

#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "app/gui/pages/setup_page.h"
#include "core/config_schema.h"
#include "core/presets.h"
#include "widgets/layer_stack_editor.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QListWidget>
#include <QPalette>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace tb::app {
namespace {

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
      {"Source", "data.valid_path"},
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

QScrollArea* scrollable(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return scroll;
}

// The preset list: "name — description" in the open list, the name alone in the closed box.
class PresetDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

 protected:
  void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
    QStyledItemDelegate::initStyleOption(option, index);
    const QString description = index.data(Qt::ToolTipRole).toString();
    if (!description.isEmpty()) {
      option->text = QStringLiteral("%1 \u2014 %2").arg(option->text, description);
    }
  }
};

QLabel* mutedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

}  // namespace

// -- Building ----------------------------------------------------------------------------------

void SetupPage::createEditors() {
  const QStringList special = specialKeys();
  for (const core::FieldInfo& field : core::configSchema()) {
    const QString path = QString::fromStdString(field.path);
    if (special.contains(path)) continue;
    auto* editor = new ConfigFieldEditor(field, this);
    if (path == QLatin1String("data.path") || path == QLatin1String("data.valid_path")) {
      editor->setBrowse(ConfigFieldEditor::Browse::Directory);
    }
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
  // The open list shows each preset with its description; the closed box, its name.
  m_presetBox->setItemDelegate(new PresetDelegate(m_presetBox));
  m_presetBox->view()->setMinimumWidth(560);
  m_presetBox->view()->setTextElideMode(Qt::ElideRight);
  for (const core::PresetInfo& preset : core::presets()) {
    const QString name = QString::fromStdString(preset.name);
    m_presetBox->addItem(name, name);
    m_presetBox->setItemData(m_presetBox->count() - 1, QString::fromStdString(preset.description),
                             Qt::ToolTipRole);
  }
  m_presetBox->setToolTip(
      tr("Start from a compiled-in preset (replaces every setting; asks first when you have "
         "edited them)"));
  connect(m_presetBox, &QComboBox::activated, this, &SetupPage::choosePreset);

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
  m_source->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_message = new QLabel(bar);
  m_message->setObjectName(QStringLiteral("loadSaveMessage"));
  m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_message->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  m_message->setMinimumHeight(m_message->fontMetrics().height());

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
  // Long paths must not widen the window: cut at its edge, whole in the tooltip.
  m_trainer->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);

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

}  // namespace tb::app
