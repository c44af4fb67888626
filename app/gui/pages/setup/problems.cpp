// SetupPage: the problems that stop a launch (core validation of the document, what data-info
// found wrong with the data, the run destination's), the one-line summary and the list under
// the panels, and going to the field a problem is about.

#include "app/gui/pages/setup/setup_page.h"

#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/data_info_view.h"
#include "app/gui/pages/setup/config_key.h"
#include "app/gui/pages/setup/run_destination.h"
#include "app/gui/pages/setup/trainer_checks.h"
#include "widgets/colours.h"
#include "widgets/layer_stack_editor.h"
#include "widgets/wrapping_list.h"

#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QMap>
#include <QPalette>
#include <QScrollArea>
#include <QStyle>
#include <QTabWidget>

#include <algorithm>

namespace tb::app {
namespace {

const QString kRunDirPath = QStringLiteral("run_dir");
const QString kDataPath = QStringLiteral("data.path");
using Json = nlohmann::ordered_json;

}  // namespace

void SetupPage::setLabelColor(QLabel* label, const QColor& color) {
  QPalette palette = label->palette();
  palette.setColor(QPalette::WindowText, color);
  label->setPalette(palette);
  label->setForegroundRole(QPalette::WindowText);
}

void SetupPage::buildProblemList() {
  m_summary = new QLabel(this);
  m_summary->setObjectName(QStringLiteral("validationSummary"));
  QFont bold = m_summary->font();
  bold.setBold(true);
  m_summary->setFont(bold);

  // A problem names a key and says what is wrong with it, often in a long sentence: it wraps
  // to the page's width, and the list grows to show the first few whole.
  m_problems = new widgets::WrappingList(this);
  m_problems->setObjectName(QStringLiteral("problemList"));
  m_problems->setToolTip(tr("Click a problem to go to its field"));
  m_problems->setSelectionMode(QAbstractItemView::SingleSelection);
  m_problems->setIconSize(QSize(16, 16));
  m_problems->setMaximumVisibleRows(3);
  connect(m_problems, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { focusField(item->data(Qt::UserRole).toString()); });
  connect(m_problems, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { focusField(item->data(Qt::UserRole).toString()); });
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
    const QString key = configKeyOf(path, &index);
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
  collectWarnings();
  refreshProblemList();
}

// Settings a run starts with but that do not do what they say.
void SetupPage::collectWarnings() {
  m_warnings.clear();
  const auto label = [this](const char* path) {
    const ConfigFieldEditor* editor = m_editors.value(QString::fromLatin1(path));
    return editor != nullptr ? editor->labelText() : QString::fromLatin1(path);
  };
  const auto isSet = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_string() && !v.get<std::string>().empty();
  };
  // The trainer only warns, once running, and trains without the perceptual loss.
  const Json perceptual = value(QStringLiteral("loss.perceptual_weight"));
  if (perceptual.is_number() && perceptual.get<double>() > 0 &&
      !(isSet("loss.lpips_backbone") && isSet("loss.lpips_lin"))) {
    m_warnings.emplace_back(
        isSet("loss.lpips_backbone") ? QStringLiteral("loss.lpips_lin")
                                     : QStringLiteral("loss.lpips_backbone"),
        tr("%1 is %2 but the LPIPS weight files (%3, %4) are not both set: the run would train "
           "without the perceptual loss. Choose both files, or set %1 to 0.")
            .arg(label("loss.perceptual_weight"), QString::number(perceptual.get<double>()),
                 label("loss.lpips_backbone"), label("loss.lpips_lin")));
  }
  if (const QString held = m_dataInfo->validationWarning(); !held.isEmpty())
    m_warnings.emplace_back(QStringLiteral("data.valid_path"), held);
}

QStringList SetupPage::warnings() const {
  QStringList texts;
  for (const auto& [path, message] : m_warnings) texts << path + QStringLiteral(": ") + message;
  return texts;
}

QStringList SetupPage::validationErrors() const {
  QStringList errors;
  for (const auto& [path, message] : m_configErrors) {
    errors << (path.isEmpty() ? message : path + QStringLiteral(": ") + message);
  }
  if (!m_dataProblem.isEmpty()) errors << kDataPath + QStringLiteral(": ") + m_dataProblem;
  for (const QString& problem : m_destination->problems()) {
    errors << kRunDirPath + QStringLiteral(": ") + problem;
  }
  return errors;
}

void SetupPage::setDataProblem(const QString& problem) {
  const bool changed = problem != m_dataProblem;
  m_dataProblem = problem;
  collectWarnings();     // the data check's own (no validation clips)
  refreshProblemList();  // a check that began or ended changes the summary, if nothing else
  if (changed) Q_EMIT configChanged();  // a refused launch is checked again
}

void SetupPage::refreshProblemList() {
  m_problems->clear();
  auto addItem = [this](const QString& path, const QString& message,
                        QStyle::StandardPixmap icon = QStyle::SP_MessageBoxWarning) {
    auto* item = new QListWidgetItem(
        style()->standardIcon(icon),
        path.isEmpty() ? message : path + QStringLiteral(": ") + message, m_problems);
    item->setData(Qt::UserRole, path);
    item->setToolTip(tr("Click to go to %1").arg(path.isEmpty() ? tr("the document") : path));
  };
  for (const auto& [path, message] : m_configErrors) addItem(path, message);
  if (!m_dataProblem.isEmpty()) addItem(kDataPath, m_dataProblem);
  for (const QString& problem : m_destination->problems()) addItem(kRunDirPath, problem);
  const int count = m_problems->count();
  // Warnings after the problems: they do not stop a launch.
  for (const auto& [path, message] : m_warnings)
    addItem(path, message, QStyle::SP_MessageBoxInformation);
  const int warningCount = static_cast<int>(m_warnings.size());
  const QString warned = warningCount == 0   ? QString()
                         : warningCount == 1 ? tr(" (1 warning below)")
                                             : tr(" (%1 warnings below)").arg(warningCount);

  if (count == 0 && m_checks->isCheckingData()) {
    m_summary->setText(
        tr("\u2713  No problems in the settings%1; the data is being checked\u2026").arg(warned));
    setLabelColor(m_summary, widgets::colours::ok());
  } else if (count == 0 && !m_dataInfo->checkedText().isEmpty()) {
    m_summary->setText(tr("\u2713  No problems: the data was checked (%1); this configuration "
                          "can be launched%2.")
                           .arg(m_dataInfo->checkedText(), warned));
    setLabelColor(m_summary, widgets::colours::ok());
  } else if (count == 0) {
    m_summary->setText(
        tr("\u2713  No problems: this configuration can be launched%1.").arg(warned));
    setLabelColor(m_summary, widgets::colours::ok());
  } else {
    m_summary->setText((count == 1
                            ? tr("\u2717  1 problem must be fixed before a launch%1:")
                            : tr("\u2717  %1 problems must be fixed before a launch%2:").arg(count))
                           .arg(warned));
    setLabelColor(m_summary, widgets::colours::error());
  }
  m_problems->setVisible(m_problems->count() > 0);  // problems and warnings
  m_problems->fitRows();
}

QStringList SetupPage::problemListText() const {
  QStringList texts;
  for (int row = 0; row < m_problems->count(); ++row) texts << m_problems->item(row)->text();
  return texts;
}

QString SetupPage::validationSummaryText() const { return m_summary->text(); }

void SetupPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  refreshProblemList();  // the run directory may have been created since
}

// -- Going to a field --------------------------------------------------------------------------

void SetupPage::showPanel(Panel panel) { m_tabs->setCurrentIndex(static_cast<int>(panel)); }

SetupPage::Panel SetupPage::currentPanel() const {
  return static_cast<Panel>(m_tabs->currentIndex());
}

bool SetupPage::focusField(const QString& path) {
  if (path == kRunDirPath) {
    m_destination->focusName();
    return true;
  }
  int index = -1;
  const QString key = configKeyOf(path, &index);
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

}  // namespace tb::app
