#include "app/pages/setup_page.h"

#include "app/pages/page_header.h"
#include "app/trainer_location.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>

namespace tb::app {
namespace {

QLabel* makeValueLabel(QWidget* parent, const QString& objectName) {
  auto* label = new QLabel(parent);
  label->setObjectName(objectName);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setWordWrap(true);
  return label;
}

// Shows `value`, or `placeholder` in the muted colour when `value` is empty.
void showValue(QLabel* label, const QString& value, const QString& placeholder) {
  label->setText(value.isEmpty() ? placeholder : value);
  label->setForegroundRole(value.isEmpty() ? QPalette::PlaceholderText : QPalette::WindowText);
}

}  // namespace

SetupPage::SetupPage(QWidget* parent) : QWidget(parent) {
  auto* header =
      new PageHeader(tr("Setup"),
                     tr("What a training run starts from: its configuration, where it writes, and "
                        "the trainer that runs it."),
                     this);

  auto* runGroup = new QGroupBox(tr("Run"), this);
  m_config = makeValueLabel(runGroup, QStringLiteral("configValue"));
  m_runDirectory = makeValueLabel(runGroup, QStringLiteral("runDirectoryValue"));
  m_trainer = makeValueLabel(runGroup, QStringLiteral("trainerValue"));
  auto* form = new QFormLayout(runGroup);
  form->setLabelAlignment(Qt::AlignLeft);
  form->setHorizontalSpacing(24);
  form->setVerticalSpacing(10);
  form->addRow(tr("Configuration file:"), m_config);
  form->addRow(tr("Run directory:"), m_runDirectory);
  form->addRow(tr("Trainer:"), m_trainer);

  auto* note = new QLabel(
      tr("Editing the dataset, the layer stack and the distributed settings is not available "
         "in this version. Start from a configuration file with --config."),
      this);
  note->setObjectName(QStringLiteral("setupNote"));
  note->setWordWrap(true);
  note->setForegroundRole(QPalette::PlaceholderText);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 20, 24, 20);
  layout->setSpacing(16);
  layout->addWidget(header);
  layout->addWidget(runGroup);
  layout->addWidget(note);
  layout->addStretch(1);

  setConfigPath({});
  setRunDirectory({});
  showValue(m_trainer, {}, tr("not searched"));
}

void SetupPage::setConfigPath(const QString& path) {
  showValue(m_config, path, tr("none (pass one with --config FILE)"));
}

void SetupPage::setRunDirectory(const QString& path) {
  showValue(m_runDirectory, path, tr("none (File \u25b8 Open Run Directory\u2026)"));
}

void SetupPage::setTrainerLocation(const TrainerLocation& trainer) {
  if (trainer.found()) {
    showValue(m_trainer, tr("%1 (%2)").arg(trainer.path, trainer.origin), {});
  } else if (!trainer.problem.isEmpty()) {
    showValue(m_trainer, {}, tr("not found: %1").arg(trainer.problem));
  } else {
    showValue(m_trainer, {}, tr("not searched"));
  }
}

QString SetupPage::configText() const { return m_config->text(); }

QString SetupPage::runDirectoryText() const { return m_runDirectory->text(); }

QString SetupPage::trainerText() const { return m_trainer->text(); }

}  // namespace tb::app
