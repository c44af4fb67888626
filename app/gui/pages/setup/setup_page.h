#pragma once

#include "app/control/config_document.h"
#include "app/control/launch_request.h"

#include <nlohmann/json.hpp>

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <utility>
#include <vector>

class QColor;
class QComboBox;
class QGroupBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QTabWidget;
class QToolButton;

namespace tb::widgets {
class ElidedLabel;
class LayerStackEditor;
class WrappingList;
}  // namespace tb::widgets

namespace tb::app {

class ConfigFieldEditor;
class DataInfoView;
class ModelInfoView;
class RunDestination;
class TrainerChecks;
class TrainerQuery;
struct TrainerLocation;

/// Setup: the run configuration a training run starts from, edited in four panels (Dataset,
/// Model, Training & loss, Distributed) under a bar with the preset chooser, Load/Save JSON,
/// the run directory and the list of problems.
///
/// The page edits one ConfigDocument (every key of the schema, plus whatever unknown keys a
/// loaded file had). Its forms are generated from core::configSchema(): one ConfigFieldEditor
/// per leaf key except those placed by hand (specialKeys(): the schema version, which is fixed,
/// and model.layers, edited with a LayerStackEditor). Every edit updates the document and runs
/// core validation in-process; bad fields are outlined in red and listed, and clicking a
/// problem focuses its field. After edits settle the page asks the trainer for `model-info`
/// and `data-info` (asynchronously, newest request wins) and shows the answers beside the forms.
///
/// Its files, by concern: setup_page.cpp (the document and its edits), setup_form.cpp (the
/// panels of generated editors), field_rules.cpp (which group a key goes in, which keys are in
/// use), config_source.cpp (presets, Load/Save and the bar above), problems.cpp (validation, the
/// problem list and going to a field), launch_command.cpp (the launch and its command line);
/// TrainerChecks runs the trainer's checks and RunDestination holds the runs folder and run name.
class SetupPage : public QWidget {
  Q_OBJECT

 public:
  enum class Panel { Dataset = 0, Model = 1, Training = 2, Distributed = 3 };

  explicit SetupPage(QWidget* parent = nullptr);
  ~SetupPage() override;

  /// Schema keys that have no generated ConfigFieldEditor ("version", "model.layers").
  static QStringList specialKeys();

  // -- What the rest of the window uses ------------------------------------------------------

  /// The whole document as JSON text (two-space indent, final newline): what Save writes and
  /// what a launch gives the trainer.
  QString configJsonText() const;
  const nlohmann::ordered_json& configDocument() const { return m_config->json(); }
  /// The configuration model the page edits (shared with the follower and the Compare form).
  const ConfigDocument& document() const { return *m_config; }
  /// "path: message" for every problem: core validation of the document, what the trainer's
  /// data-info found wrong with the data (no such folder, no usable clip: "data.path: ..."),
  /// then the run directory's (empty name, already holds a run). Empty when a launch may start.
  QStringList validationErrors() const;
  /// Runs folder joined with the run name, absolute and cleaned.
  QString runDirectory() const;
  /// Where a launch writes the configuration it passes with --config:
  /// "<runs folder>/<run name>.config.json" (the trainer copies it into the run directory).
  QString launchConfigPath() const;
  /// Writes configJsonText() to launchConfigPath(); false with `error` set on failure. The
  /// settings written count as kept (confirmDiscardEdits() does not ask about them).
  bool writeLaunchConfig(QString* error = nullptr);
  /// The trainer invocation the Launch button starts for the current settings (trainer empty
  /// when none was found).
  LaunchRequest launchRequest() const;
  /// shellCommandLine(launchRequest()), as shown on the Distributed panel ("tokenbench-trainer"
  /// standing for a trainer that was not found).
  QString commandLineText() const;

  /// Replaces the document with a JSON file (keys it lacks take their defaults). Returns false
  /// and keeps the current document when the file cannot be read or is not a JSON object; the
  /// reason is shown in the page and returned by lastMessage().
  bool loadConfigFile(const QString& path);
  /// Writes configJsonText() to `path` (atomically). Returns false, with the reason in
  /// lastMessage(), when it cannot.
  bool saveConfigFile(const QString& path);
  /// Replaces the document with a compiled-in preset (core::loadPreset), without asking.
  bool applyPreset(const QString& name);
  /// What choosing preset `index` in the chooser does: asks before discarding unsaved edits
  /// (confirmDiscardEdits()), applies the preset, and, for a preset that does not name its data
  /// (every one but demo is meant for your own footage), asks for the folder of videos or
  /// images; cancelled, the preset keeps the procedural clips and the page says so.
  void choosePreset(int index);
  /// True while the document differs from what was loaded, saved or reset to a preset (with
  /// the footage a preset asked for): edits put back by hand are no edits.
  bool isModified() const;
  /// Without edits, or with the settings last launched (kept in their .config.json): true.
  /// Otherwise asks whether to discard them (`action` titles the question); true when the
  /// user agrees.
  bool confirmDiscardEdits(const QString& action);
  /// The preset the document came from; empty after loading a file.
  QString presetName() const { return m_preset; }
  /// The last load/save outcome shown in the page.
  QString lastMessage() const;

  /// Sets the key at `path` ("train.lr") to `value` as if the user had edited it.
  void setValue(const QString& path, const nlohmann::ordered_json& value);
  /// The document's value at `path` (null when absent).
  nlohmann::ordered_json value(const QString& path) const;

  // -- Parts, for tests and for the window ---------------------------------------------------

  ConfigFieldEditor* fieldEditor(const QString& path) const;
  QList<ConfigFieldEditor*> fieldEditors() const;
  widgets::LayerStackEditor* layerEditor() const { return m_layers; }
  ModelInfoView* modelInfoView() const { return m_modelInfo; }
  DataInfoView* dataInfoView() const { return m_dataInfo; }
  TrainerQuery* modelInfoQuery() const;
  TrainerQuery* dataInfoQuery() const;
  /// Shows `panel`.
  void showPanel(Panel panel);
  Panel currentPanel() const;
  /// Shows the panel holding `path` (a key, or a problem path such as "model.layers[2]"),
  /// scrolls to its editor and focuses it. Returns false for a path with no editor.
  bool focusField(const QString& path);
  /// "path: message" for every warning: settings a launch accepts but that do not do what they
  /// say (a perceptual loss weight without the LPIPS weight files). Listed after the problems.
  QStringList warnings() const;
  /// The problems as listed (validationErrors(), then warnings()).
  QStringList problemListText() const;
  /// The text of the validation summary line ("No problems", "2 problems", ...).
  QString validationSummaryText() const;

  // -- Setters MainWindow calls ---------------------------------------------------------------

  /// --config FILE: loads it ("" leaves the document alone).
  void setConfigPath(const QString& path);
  /// A run directory opened in the window: its parent becomes the runs folder. A folder that
  /// holds no run yet (no config.json) becomes the run directory itself; beside an existing
  /// run, a fresh run name is suggested so that a launch never targets a finished run.
  void setRunDirectory(const QString& path);
  /// Which trainer model-info, data-info and the launch use.
  void setTrainerLocation(const TrainerLocation& trainer);

  /// Where the document came from ("Preset demo", the loaded file, + "modified").
  QString configText() const;
  /// Whether the label of the field at `path` is marked changed (its value differs from what
  /// the preset or file says).
  bool isMarkedChanged(const QString& path) const;
  /// runDirectory().
  QString runDirectoryText() const;
  /// The trainer's path and origin, or why none was found.
  QString trainerText() const;

 Q_SIGNALS:
  /// The document or the run directory changed.
  void configChanged();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // The document and its edits (setup_page.cpp).
  void documentReplaced();
  void refreshAfterChange();
  void showDocumentInEditors();
  void onFieldEdited(const QString& path);
  void onLayersEdited();
  void documentEdited(const QString& changedPath);
  void requestModelInfo();
  void requestDataInfo();
  void destinationEdited();

  // The panels (setup_form.cpp).
  void createEditors();
  void buildPanels();
  QWidget* buildDatasetPanel();
  QWidget* buildModelPanel();
  QWidget* buildTrainingPanel();
  QWidget* buildDistributedPanel();
  QGroupBox* fieldGroup(const QString& title, const QStringList& paths, QWidget* parent);
  int panelOf(const QString& path) const;

  // Which keys are in use (field_rules.cpp).
  void refreshModelKind();
  void refreshDependentFields();

  // Presets, files and the bar above the panels (config_source.cpp).
  void buildTopBar();
  void chooseAndLoad();
  void chooseAndSave();
  void askForDataFolder();
  void showMessage(const QString& text, bool error);
  void refreshSourceLabel();
  void refreshChangedMarks();
  static bool sameSettings(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);
  QString runNameBase() const;

  // Validation and the problem list (problems.cpp).
  static void setLabelColor(QLabel* label, const QColor& color);
  void buildProblemList();
  void revalidate();
  void setDataProblem(const QString& problem);
  void collectWarnings();
  void refreshProblemList();

  // The launch's command line (launch_command.cpp).
  void refreshCommandLine();

  ConfigDocument* m_config = nullptr;                       // child of the page
  std::vector<std::pair<QString, QString>> m_configErrors;  // path, message
  std::vector<std::pair<QString, QString>> m_warnings;      // path, message
  QString m_dataProblem;  // what data-info found wrong; "" when nothing (or not known yet)
  QString m_preset;
  QString m_sourceFile;
  nlohmann::ordered_json m_baseline;  // what was loaded, saved or chosen (isModified())
  nlohmann::ordered_json m_launched;  // what the last launch wrote
  QString m_trainerPath;
  QString m_trainerText;
  TrainerChecks* m_checks = nullptr;  // child of the page

  QWidget* m_bar = nullptr;
  QComboBox* m_presetBox = nullptr;
  QPushButton* m_loadButton = nullptr;
  QPushButton* m_saveButton = nullptr;
  QLabel* m_source = nullptr;
  widgets::ElidedLabel* m_message = nullptr;
  RunDestination* m_destination = nullptr;
  QLabel* m_trainer = nullptr;
  QLabel* m_summary = nullptr;
  widgets::WrappingList* m_problems = nullptr;
  QTabWidget* m_tabs = nullptr;
  QList<QScrollArea*> m_scrolls;

  QHash<QString, ConfigFieldEditor*> m_editors;
  QHash<QString, QLabel*> m_labels;
  QHash<QString, QGroupBox*> m_groupOf;  // path -> group box holding the editor
  widgets::LayerStackEditor* m_layers = nullptr;
  QGroupBox* m_magvitGroup = nullptr;
  QGroupBox* m_vqganGroup = nullptr;
  ModelInfoView* m_modelInfo = nullptr;
  DataInfoView* m_dataInfo = nullptr;
  QPlainTextEdit* m_commandLine = nullptr;
  QToolButton* m_copyCommand = nullptr;
  QLabel* m_commandNote = nullptr;
};

}  // namespace tb::app
