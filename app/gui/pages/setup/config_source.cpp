// SetupPage: where the document comes from. The bar above the panels (preset chooser, Load and
// Save JSON, where the settings came from, the run destination, the trainer), presets, files,
// and the name a new run is suggested from them.

#include "app/gui/pages/setup/setup_page.h"

#include "app/control/run_summary_reader.h"
#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/setup/run_destination.h"
#include "core/config_io.h"
#include "core/presets.h"
#include "widgets/colours.h"
#include "widgets/elided_label.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListView>
#include <QMessageBox>
#include <QPalette>
#include <QPushButton>
#include <QStyledItemDelegate>

#include <algorithm>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

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

}  // namespace

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
  m_message = new widgets::ElidedLabel(bar);
  m_message->setElideMode(Qt::ElideMiddle);  // a file's name and its fate at either end
  m_message->setObjectName(QStringLiteral("loadSaveMessage"));
  m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_message->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  m_message->setMinimumHeight(m_message->fontMetrics().height());

  m_destination = new RunDestination(bar);
  m_destination->setNameBase([this] { return runNameBase(); });
  connect(m_destination, &RunDestination::edited, this, &SetupPage::destinationEdited);

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
  grid->addWidget(m_destination, 1, 1);
  grid->addWidget(new QLabel(tr("Trainer:"), bar), 2, 0);
  grid->addWidget(m_trainer, 2, 1);
  grid->addWidget(m_message, 3, 1);
  grid->setColumnStretch(1, 1);
}

// -- Load, save, presets -----------------------------------------------------------------------

bool SetupPage::loadConfigFile(const QString& path) {
  if (!m_config->load(path)) {
    showMessage(tr("Not loaded: %1").arg(m_config->loadError()), true);
    return false;
  }
  m_preset.clear();
  m_sourceFile = QFileInfo(path).absoluteFilePath();
  m_baseline = m_config->json();
  m_presetBox->setCurrentIndex(-1);
  m_destination->suggestName();
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
  m_baseline = m_config->json();
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
  m_presetBox->setCurrentIndex(m_presetBox->findData(name));
  m_destination->suggestName();
  showMessage({}, false);
  m_config->setDocument(core::toJson(load.config));
  m_baseline = m_config->json();
  documentReplaced();
  return true;
}

QString SetupPage::lastMessage() const { return m_message->fullText(); }

bool SetupPage::sameSettings(const Json& a, const Json& b) {
  // Compared as values: the order of keys, and 1 against 1.0, are no change.
  return nlohmann::json(a) == nlohmann::json(b);
}

bool SetupPage::isMarkedChanged(const QString& path) const {
  const QLabel* label = m_labels.value(path);
  return label != nullptr && label->property("changed").toBool();
}

bool SetupPage::isModified() const { return !sameSettings(m_config->json(), m_baseline); }

bool SetupPage::confirmDiscardEdits(const QString& action) {
  // Nothing is lost when the settings are what was loaded, saved, chosen or launched.
  if (!isModified() || sameSettings(m_config->json(), m_launched)) return true;
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
  if (name == m_preset && !isModified()) return;
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
  // The footage the preset asked for completes it: no edit of the user's to keep.
  m_baseline = m_config->json();
  refreshSourceLabel();
  showPanel(Panel::Dataset);
}

void SetupPage::showMessage(const QString& text, bool error) {
  // The line keeps its place when empty: a message appearing must not move the fields.
  m_message->setFullText(text);  // cut to the label's width as it changes, whole in its tooltip
  setLabelColor(m_message, error ? widgets::colours::error() : widgets::colours::ok());
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
  if (isModified()) text += tr(" \u2014 modified");
  m_source->setText(text);
  m_source->setToolTip(text);
  m_source->setForegroundRole(QPalette::PlaceholderText);
  refreshChangedMarks();
}

// The label of every field whose value differs from the preset's or the file's is drawn in
// the "changed" colour, its tooltip saying what it was: a value changed by mistake shows.
void SetupPage::refreshChangedMarks() {
  const QString origin = m_sourceFile.isEmpty() ? tr("the preset") : tr("the file");
  for (auto it = m_labels.cbegin(); it != m_labels.cend(); ++it) {
    const QString& path = it.key();
    QLabel* label = it.value();
    const ConfigFieldEditor* editor = m_editors.value(path);
    if (editor == nullptr) continue;
    const Json::json_pointer pointer = ConfigDocument::pointerOf(path);
    const Json before = m_baseline.contains(pointer) ? m_baseline.at(pointer) : Json();
    const bool changed = !sameSettings(value(path), before);
    if (label->property("changed").toBool() == changed) continue;
    label->setProperty("changed", changed);
    QPalette palette = label->palette();
    const QColor colour =
        changed ? widgets::colours::changed() : QPalette().color(QPalette::WindowText);
    palette.setColor(QPalette::Active, QPalette::WindowText, colour);
    palette.setColor(QPalette::Inactive, QPalette::WindowText, colour);
    label->setPalette(palette);
    const QString description = ConfigFieldEditor::describe(editor->field());
    label->setToolTip(
        changed
            ? description + tr("<br><b>Changed</b>: %1 says %2")
                                .arg(origin, QString::fromStdString(before.dump()).toHtmlEscaped())
            : description);
  }
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

// What a suggested run name starts with: the preset, or the file the settings came from.
QString SetupPage::runNameBase() const {
  QString base = m_preset;
  if (base.isEmpty() && !m_sourceFile.isEmpty()) {
    // A run's own config.json (Monitor > Configuration > New Run): named after the run.
    const QFileInfo source(m_sourceFile);
    base = source.fileName() == QLatin1String("config.json") &&
                   RunSummaryReader::isRunDirectory(source.path())
               ? source.dir().dirName()
               : source.completeBaseName();
  }
  return base;
}

}  // namespace tb::app
