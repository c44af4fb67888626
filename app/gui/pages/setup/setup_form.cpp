// SetupPage's panels: one generated ConfigFieldEditor per configuration key, in group boxes
// (field_rules.cpp says which), laid out in two columns on each of the four panels, with what
// the trainer finds beside the Dataset and Model forms and the launch's command line beside the
// Distributed one.

#include "app/gui/pages/setup/setup_page.h"

#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/model_info_view.h"
#include "app/gui/pages/setup/field_rules.h"
#include "app/gui/pages/setup/trainer_checks.h"
#include "core/config_schema.h"
#include "widgets/layer_stack_editor.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPalette>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace tb::app {
namespace {

QScrollArea* scrollable(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  // The columns fit a 1024 px window; where they cannot (a larger font), a scroll bar shows
  // rather than the right column being cut off unseen.
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  return scroll;
}

QLabel* mutedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

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
    if (path == QLatin1String("loss.lpips_backbone") || path == QLatin1String("loss.lpips_lin") ||
        path == QLatin1String("eval.fid_weights") || path == QLatin1String("eval.fvd_weights")) {
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
  // Where a column is too narrow for a label and its field side by side (a 1024 px window), the
  // field goes under its label rather than the panel growing past the window.
  form->setRowWrapPolicy(QFormLayout::WrapLongRows);
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
    m_checks->forgetDataInput();
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
  QWidget* content = twoColumns(&left, &right);

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
  layersLabel->setWordWrap(true);
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

int SetupPage::panelOf(const QString& path) const {
  const QString section = path.section(QLatin1Char('.'), 0, 0);
  if (section == QLatin1String("data")) return static_cast<int>(Panel::Dataset);
  if (section == QLatin1String("model")) return static_cast<int>(Panel::Model);
  if (section == QLatin1String("distributed")) return static_cast<int>(Panel::Distributed);
  return static_cast<int>(Panel::Training);
}

}  // namespace tb::app
