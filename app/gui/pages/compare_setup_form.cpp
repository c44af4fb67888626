#include "app/gui/pages/compare_setup_form.h"

#include "app/control/config_document.h"
#include "app/control/file_read_thread.h"
#include "app/control/run_summary_reader.h"
#include "app/control/wire_text.h"
#include "app/gui/pages/compare_entry_list.h"
#include "core/checkpoint_files.h"
#include "core/config_choices.h"
#include "core/config_io.h"
#include "core/run_directory.h"
#include "widgets/colours.h"

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

namespace tb::app {
namespace {

constexpr int kMaxClips = 256;
constexpr int kLogLines = 500;

// A line edit with a "…" button that picks its value.
QWidget* withBrowse(QLineEdit* edit, QToolButton** button, QWidget* parent) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(edit, 1);
  *button = new QToolButton(row);
  (*button)->setText(QStringLiteral("\u2026"));
  layout->addWidget(*button);
  return row;
}

}  // namespace

CompareSetupForm::CompareSetupForm(QWidget* parent)
    : QWidget(parent), m_reads(new FileReadThread(QStringLiteral("CompareSetupForm"), this)) {
  // Open an existing comparison.
  m_open = new QPushButton(tr("Open Compare Folder\u2026"), this);
  m_open->setObjectName(QStringLiteral("openCompareFolder"));
  m_open->setToolTip(tr("A folder written by tokenbench-trainer compare (it holds metrics.json)"));
  connect(m_open, &QPushButton::clicked, this, &CompareSetupForm::openFolderRequested);

  // A new comparison.
  auto* tokenizerLabel = new QLabel(tr("Tokenizers: runs or checkpoint folders"), this);
  m_entries = new CompareEntryList(this);
  m_entries->setObjectName(QStringLiteral("compareEntryList"));
  connect(m_entries, &CompareEntryList::changed, this, &CompareSetupForm::updateCommandLine);
  connect(m_entries, &CompareEntryList::addFolderRequested, this,
          &CompareSetupForm::chooseEntryFolder);

  QToolButton* browse = nullptr;
  m_data = new QLineEdit(this);
  m_data->setObjectName(QStringLiteral("compareData"));
  m_data->setPlaceholderText(tr("procedural clips (built in)"));
  m_data->setClearButtonEnabled(true);
  QWidget* dataRow = withBrowse(m_data, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseDirectoryFor(m_data, tr("Data Folder")); });
  m_dataType = new QComboBox(this);
  m_dataType->setObjectName(QStringLiteral("compareDataType"));
  for (const std::string& type : core::compareDataTypes())
    m_dataType->addItem(QString::fromStdString(type), QString::fromStdString(type));
  m_clips = new QSpinBox(this);
  m_clips->setObjectName(QStringLiteral("compareClips"));
  m_clips->setRange(1, kMaxClips);
  m_clips->setValue(4);
  m_clips->setToolTip(tr("Every file's first clip, centre crop; procedural clips without data"));

  m_lpipsNet = new QComboBox(this);
  m_lpipsNet->setObjectName(QStringLiteral("compareLpipsNet"));
  for (const std::string& net : core::choiceNames<core::LpipsNet>())
    m_lpipsNet->addItem(QString::fromStdString(net), QString::fromStdString(net));
  m_lpipsBackbone = new QLineEdit(this);
  m_lpipsBackbone->setObjectName(QStringLiteral("compareLpipsBackbone"));
  m_lpipsBackbone->setPlaceholderText(tr("none: no LPIPS"));
  m_lpipsBackbone->setClearButtonEnabled(true);
  QWidget* backboneRow = withBrowse(m_lpipsBackbone, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseFileFor(m_lpipsBackbone, tr("LPIPS Backbone Weights")); });
  m_lpipsLin = new QLineEdit(this);
  m_lpipsLin->setObjectName(QStringLiteral("compareLpipsLin"));
  m_lpipsLin->setPlaceholderText(tr("none: no LPIPS"));
  m_lpipsLin->setClearButtonEnabled(true);
  QWidget* linRow = withBrowse(m_lpipsLin, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseFileFor(m_lpipsLin, tr("LPIPS Linear Weights")); });
  m_fidWeights = new QLineEdit(this);
  m_fidWeights->setObjectName(QStringLiteral("compareFidWeights"));
  m_fidWeights->setPlaceholderText(tr("none: no rFID"));
  m_fidWeights->setClearButtonEnabled(true);
  m_fidWeights->setToolTip(
      tr("pt_inception-2015-12-05-6726825d.pth (pytorch-fid's InceptionV3): rFID over every "
         "compared frame, beside the means. With a few clips it ranks these tokenizers only: "
         "papers use 50,000 images (tokenbench-trainer evaluate)"));
  QWidget* fidRow = withBrowse(m_fidWeights, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseFileFor(m_fidWeights, tr("rFID Weights")); });
  m_fvdWeights = new QLineEdit(this);
  m_fvdWeights->setObjectName(QStringLiteral("compareFvdWeights"));
  m_fvdWeights->setPlaceholderText(tr("none: no rFVD"));
  m_fvdWeights->setClearButtonEnabled(true);
  m_fvdWeights->setToolTip(
      tr("i3d_pretrained_400.pt (VideoGPT / SEED-Voken's I3D): rFVD over the compared clips "
         "(at least 9 frames). With a few clips it ranks these tokenizers only: papers use "
         "UCF-101's 3,783 test clips"));
  QWidget* fvdRow = withBrowse(m_fvdWeights, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseFileFor(m_fvdWeights, tr("rFVD Weights")); });

  m_output = new QLineEdit(this);
  m_output->setObjectName(QStringLiteral("compareOutput"));
  m_output->setClearButtonEnabled(true);
  QWidget* outputRow = withBrowse(m_output, &browse, this);
  connect(browse, &QToolButton::clicked, this,
          [this] { chooseDirectoryFor(m_output, tr("Output Folder")); });

  auto* form = new QFormLayout;
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setLabelAlignment(Qt::AlignRight | Qt::AlignVCenter);
  form->addRow(tr("Data"), dataRow);
  form->addRow(tr("Data type"), m_dataType);
  form->addRow(tr("Clips"), m_clips);
  form->addRow(tr("LPIPS net"), m_lpipsNet);
  form->addRow(tr("Backbone"), backboneRow);
  form->addRow(tr("Linear"), linRow);
  form->addRow(tr("rFID weights"), fidRow);
  form->addRow(tr("rFVD weights"), fvdRow);
  form->addRow(tr("Output"), outputRow);

  m_command = new QLabel(this);
  m_command->setObjectName(QStringLiteral("compareCommand"));
  m_command->setWordWrap(true);
  m_command->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_command->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_command->setForegroundRole(QPalette::PlaceholderText);
  m_command->setToolTip(tr("The command Compare runs"));

  m_compare = new QPushButton(tr("Compare"), this);
  m_compare->setObjectName(QStringLiteral("runCompare"));
  m_compare->setDefault(true);
  connect(m_compare, &QPushButton::clicked, this, &CompareSetupForm::compareRequested);
  m_cancel = new QPushButton(tr("Cancel"), this);
  m_cancel->setObjectName(QStringLiteral("cancelCompare"));
  m_cancel->setEnabled(false);
  connect(m_cancel, &QPushButton::clicked, this, &CompareSetupForm::cancelRequested);
  auto* runButtons = new QHBoxLayout;
  runButtons->addWidget(m_compare);
  runButtons->addWidget(m_cancel);
  runButtons->addStretch(1);

  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("compareStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_status->hide();

  m_log = new QPlainTextEdit(this);
  m_log->setObjectName(QStringLiteral("compareLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(kLogLines);
  m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_log->setPlaceholderText(tr("The trainer's messages appear here."));
  m_log->setMinimumHeight(80);
  m_log->hide();

  auto* group = new QGroupBox(tr("New comparison"), this);
  auto* groupLayout = new QVBoxLayout(group);
  groupLayout->setSpacing(8);
  groupLayout->addWidget(tokenizerLabel);
  groupLayout->addWidget(m_entries);
  groupLayout->addLayout(form);
  groupLayout->addWidget(m_command);
  groupLayout->addLayout(runButtons);
  groupLayout->addWidget(m_status);
  groupLayout->addWidget(m_log, 1);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(12);
  layout->addWidget(m_open, 0, Qt::AlignLeft);
  layout->addWidget(group, 1);

  m_inputs = {m_open,     m_entries,   m_data, dataRow, m_dataType, m_clips,
              m_lpipsNet, backboneRow, linRow, fidRow,  fvdRow,     outputRow};
  for (QLineEdit* edit :
       {m_data, m_lpipsBackbone, m_lpipsLin, m_fidWeights, m_fvdWeights, m_output}) {
    connect(edit, &QLineEdit::textChanged, this, &CompareSetupForm::updateCommandLine);
  }
  connect(m_dataType, &QComboBox::currentIndexChanged, this, &CompareSetupForm::updateCommandLine);
  connect(m_lpipsNet, &QComboBox::currentIndexChanged, this, &CompareSetupForm::updateCommandLine);
  connect(m_clips, &QSpinBox::valueChanged, this, &CompareSetupForm::updateCommandLine);
  connect(m_data, &QLineEdit::textChanged, this,
          [this](const QString& text) { m_dataType->setEnabled(!text.isEmpty()); });
  m_dataType->setEnabled(false);
  updateCommandLine();
}

void CompareSetupForm::setOpenRun(const QString& run) {
  const QString clean = run.isEmpty() ? QString() : QDir::cleanPath(run);
  if (clean == m_openRun) return;
  m_openRun = clean;
  m_entries->setOpenRun(clean);
  if (!clean.isEmpty()) {
    // A run with a classic VQ reference (train.reference_codec) is compared with it too: whether
    // it has one is read off the window's thread, and the reference listed when the read lands
    // (if the run is still the open one).
    const QString reference = pathText(runDirectoryAt(clean).referenceDir());
    m_reads->read(
        [reference] {
          return QFileInfo::exists(QDir(reference).filePath(QStringLiteral("codec.safetensors")));
        },
        [this, clean, reference](bool exists) {
          if (exists && clean == m_openRun) {
            m_entries->addOpenRunEntry(reference, QStringLiteral("classic-vq"));
          }
        });
    fillFromRunConfig(clean);
  }
  updateCommandLine();
}

void CompareSetupForm::setTrainerPath(const QString& trainer) {
  m_trainer = trainer;
  updateCommandLine();
}

void CompareSetupForm::addEntry(const QString& path, const QString& name) {
  m_entries->addEntry(path, name);
}

QVector<CompareEntry> CompareSetupForm::entries() const { return m_entries->entries(); }

void CompareSetupForm::setDataDirectory(const QString& directory) { m_data->setText(directory); }

void CompareSetupForm::setClipCount(int clips) { m_clips->setValue(clips); }

void CompareSetupForm::setOutputDirectory(const QString& directory) {
  m_output->setText(directory);
}

QString CompareSetupForm::effectiveOutputDirectory() const {
  if (!m_output->text().trimmed().isEmpty()) return m_output->text().trimmed();
  if (m_defaultStamp.isEmpty()) {
    m_defaultStamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
  }
  // Beside the open run when it is compared (where opening it again finds the comparison), else
  // beside the first tokenizer listed; never inside a run: a run's folder belongs to its trainer,
  // and a run opened only to look at it must not change.
  const QString anchor = outputAnchor();
  // Where the runs end is read off the window's thread (updateCommandLine asks); until that read
  // lands, the folder holding the path: a run directory's parent, the common case.
  const QString base = anchor.isEmpty()
                           ? QDir::home().filePath(QStringLiteral("tokenbench-compare"))
                           : QDir(m_outsideRuns.value(anchor, QFileInfo(anchor).path()))
                                 .filePath(QStringLiteral("comparisons"));
  return QDir(base).filePath(m_defaultStamp);
}

QString CompareSetupForm::outputAnchor() const {
  if (!m_openRun.isEmpty() && m_entries->contains(m_openRun)) return m_openRun;
  const QVector<CompareEntry> listed = entries();
  return listed.isEmpty() ? QString() : QDir::cleanPath(listed.front().path);
}

QString CompareSetupForm::folderOutsideRuns(const QString& path) {
  QString folder = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
  QString outside = QFileInfo(folder).path();
  // The parent of the outermost run directory or checkpoint folder that holds `path`.
  for (QString up = folder; !up.isEmpty() && QFileInfo(up).path() != up;
       up = QFileInfo(up).path()) {
    if (RunSummaryReader::isRunDirectory(up) ||
        QFileInfo::exists(pathText(runDirectoryAt(up).root() / core::checkpoint_files::kModel))) {
      outside = QFileInfo(up).path();
    }
  }
  return outside;
}

std::optional<CompareRequest> CompareSetupForm::request(QString* problem) const {
  auto fail = [&](const QString& why) -> std::optional<CompareRequest> {
    if (problem != nullptr) *problem = why;
    return std::nullopt;
  };
  const QVector<CompareEntry> rows = entries();
  if (rows.isEmpty()) return fail(tr("Add at least one run or checkpoint folder."));
  QStringList names;
  for (const CompareEntry& e : rows) {
    if (e.name.isEmpty()) return fail(tr("Every tokenizer needs a name."));
    if (compareEntryName(e.name, {}) != e.name) {
      return fail(tr("\"%1\": a name is letters, digits, '-', '_' or '.', and not \"original\".")
                      .arg(e.name));
    }
    if (names.contains(e.name)) return fail(tr("The name \"%1\" is given twice.").arg(e.name));
    names << e.name;
  }
  if (m_lpipsBackbone->text().trimmed().isEmpty() != m_lpipsLin->text().trimmed().isEmpty()) {
    return fail(tr("LPIPS needs both weight files (backbone and linear), or neither."));
  }
  if (m_trainer.isEmpty()) {
    return fail(
        tr("tokenbench-trainer was not found: start Tokenbench with --trainer PATH or "
           "set TOKENBENCH_TRAINER."));
  }
  return CompareRequest{m_trainer, command()};
}

core::CompareCommand CompareSetupForm::command() const {
  core::CompareCommand command;
  command.entries = compareEntries(entries());
  command.out_dir = fileSystemPath(effectiveOutputDirectory()).string();
  command.data_dir = fileSystemPath(m_data->text().trimmed()).string();
  command.data_type = m_dataType->currentData().toString().toStdString();
  command.clips = m_clips->value();
  command.lpips_net = m_lpipsNet->currentData().toString().toStdString();
  command.lpips_backbone = fileSystemPath(m_lpipsBackbone->text().trimmed()).string();
  command.lpips_lin = fileSystemPath(m_lpipsLin->text().trimmed()).string();
  if (!m_fidWeights->text().trimmed().isEmpty())
    command.fid_weights = fileSystemPath(m_fidWeights->text().trimmed()).string();
  if (!m_fvdWeights->text().trimmed().isEmpty())
    command.fvd_weights = fileSystemPath(m_fvdWeights->text().trimmed()).string();
  return command;
}

QString CompareSetupForm::commandLine() const {
  return compareCommandLine(CompareRequest{
      m_trainer.isEmpty() ? QStringLiteral("tokenbench-trainer") : m_trainer, command()});
}

void CompareSetupForm::setRunning(bool running) {
  for (QWidget* input : m_inputs) input->setEnabled(!running);
  m_dataType->setEnabled(!running && !m_data->text().isEmpty());  // only means something with data
  m_compare->setEnabled(!running);
  m_cancel->setEnabled(running);
  if (running) {
    m_log->show();
  } else {
    m_defaultStamp.clear();  // the next comparison gets a folder of its own
    updateCommandLine();
  }
}

void CompareSetupForm::appendLog(const QString& line) {
  m_log->show();
  m_log->appendPlainText(line);
}

void CompareSetupForm::clearLog() { m_log->clear(); }

void CompareSetupForm::setStatus(const QString& text, bool error) {
  m_status->setText(text);
  m_status->setVisible(!text.isEmpty());
  m_status->setStyleSheet(error ? QStringLiteral("color: %1;").arg(widgets::colours::error().name())
                                : QString());
}

QString CompareSetupForm::statusText() const { return m_status->text(); }

void CompareSetupForm::chooseEntryFolder() {
  const QString path = QFileDialog::getExistingDirectory(
      this, tr("Run Directory or Checkpoint Folder"),
      m_openRun.isEmpty() ? QString() : QFileInfo(m_openRun).absolutePath());
  if (!path.isEmpty()) addEntry(path);
}

void CompareSetupForm::chooseDirectoryFor(QLineEdit* edit, const QString& title) {
  const QString path = QFileDialog::getExistingDirectory(this, title, edit->text());
  if (!path.isEmpty()) edit->setText(path);
}

void CompareSetupForm::chooseFileFor(QLineEdit* edit, const QString& title) {
  const QString path = QFileDialog::getOpenFileName(
      this, title, edit->text(), tr("PyTorch weights (*.pth *.pt);;All files (*)"));
  if (!path.isEmpty()) edit->setText(path);
}

void CompareSetupForm::fillFromRunConfig(const QString& run) {
  // What the run's config.json names, where it exists: read on the form's reading thread, so a
  // hung file system (or a FIFO where config.json should be) never holds the window.
  struct Suggestion {
    QString dataPath;
    QString dataType;
    QString lpipsBackbone;
    QString lpipsLin;
    QString lpipsNet;
    QString fidWeights;  // the run's eval.fid_weights / eval.fvd_weights, when they are here
    QString fvdWeights;
  };
  m_reads->read(
      [file = pathText(runDirectoryAt(run).configFile())] {
        Suggestion suggestion;
        ConfigDocument document;
        if (!document.load(file)) return suggestion;
        const core::RunConfig& config = document.config();
        const QString type = QString::fromLatin1(core::choiceName(config.data.type));
        const QString path = pathText(config.data.path);
        if ((config.data.type == core::DataType::Videos ||
             config.data.type == core::DataType::Images) &&
            QFileInfo(path).isDir()) {
          suggestion.dataPath = path;
          suggestion.dataType = type;
        }
        const QString backbone = pathText(config.loss.lpips_backbone);
        const QString lin = pathText(config.loss.lpips_lin);
        if (QFileInfo(backbone).isFile() && QFileInfo(lin).isFile()) {
          suggestion.lpipsBackbone = backbone;
          suggestion.lpipsLin = lin;
          suggestion.lpipsNet = QString::fromLatin1(core::choiceName(config.loss.perceptual_net));
        }
        if (QFileInfo(pathText(config.eval.fid_weights)).isFile())
          suggestion.fidWeights = pathText(config.eval.fid_weights);
        if (QFileInfo(pathText(config.eval.fvd_weights)).isFile())
          suggestion.fvdWeights = pathText(config.eval.fvd_weights);
        return suggestion;
      },
      [this, run](const Suggestion& suggestion) {
        if (run != m_openRun) return;  // another run was opened meanwhile
        // Only into fields that are empty or still hold what the form filled in for the run
        // open before: what the user typed stays.
        auto ours = [this](QLineEdit* edit) {
          return edit->text().isEmpty() || edit->text() == m_filled.value(edit);
        };
        auto fill = [this](QLineEdit* edit, const QString& value) {
          edit->setText(value);
          m_filled.insert(edit, value);
        };
        if (ours(m_data)) {
          fill(m_data, suggestion.dataPath);
          if (!suggestion.dataPath.isEmpty())
            m_dataType->setCurrentIndex(m_dataType->findData(suggestion.dataType));
        }
        if (ours(m_lpipsBackbone) && ours(m_lpipsLin)) {
          fill(m_lpipsBackbone, suggestion.lpipsBackbone);
          fill(m_lpipsLin, suggestion.lpipsLin);
          const int net = m_lpipsNet->findData(suggestion.lpipsNet);
          if (net >= 0) m_lpipsNet->setCurrentIndex(net);
        }
        if (ours(m_fidWeights)) fill(m_fidWeights, suggestion.fidWeights);
        if (ours(m_fvdWeights)) fill(m_fvdWeights, suggestion.fvdWeights);
        updateCommandLine();
      });
}

bool CompareSetupForm::waitForReads(int timeoutMs) { return m_reads->waitForReads(timeoutMs); }

void CompareSetupForm::updateCommandLine() {
  if (const QString path = outputAnchor(); !path.isEmpty()) {
    if (!m_outsideRunsAsked.contains(path)) {
      m_outsideRunsAsked.insert(path);
      m_reads->read([path] { return folderOutsideRuns(path); },
                    [this, path](const QString& outside) {
                      m_outsideRuns.insert(path, outside);
                      updateCommandLine();
                    });
    }
  }
  m_output->setPlaceholderText(effectiveOutputDirectory());
  m_command->setText(commandLine());
}

}  // namespace tb::app
