// The configuration's fields as the Setup page arranges them. What a key is, its group, its
// label and when it applies come from core's schema (core/run_config.h); the page adds which
// architecture group is shown (SetupPage::refreshModelKind) and the keys it edits by hand
// (specialKeys).

#include "app/gui/pages/setup/field_rules.h"

#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/setup/setup_page.h"
#include "core/config_schema.h"
#include "core/run_config.h"
#include "widgets/layer_stack_editor.h"

#include <QGroupBox>
#include <QLabel>

#include <vector>

namespace tb::app {
namespace {

// The schema once: core::configSchema() builds it from the defaults on every call.
const std::vector<core::FieldInfo>& schema() {
  static const std::vector<core::FieldInfo> fields = core::configSchema();
  return fields;
}

const core::FieldInfo* fieldAt(const QString& path) {
  const std::string key = path.toStdString();
  for (const core::FieldInfo& field : schema())
    if (field.path == key) return &field;
  return nullptr;
}

}  // namespace

QString groupTitleFor(const QString& path) {
  if (const core::FieldInfo* field = fieldAt(path))
    return QString::fromStdString(core::fieldGroup(*field));
  return QStringLiteral("Other: ") + path.section(QLatin1Char('.'), 0, 0);
}

QStringList SetupPage::specialKeys() {
  return {QStringLiteral("version"), QStringLiteral("model.layers")};
}

void SetupPage::refreshDependentFields() {
  // Keys that only matter for some values of others (their FieldSpec::appliesWhen) are greyed
  // out otherwise, judged on the document as read (a value with the wrong type counts as its
  // default). A key with a problem stays editable so that it can be fixed.
  const core::RunConfig& config = m_config->config();
  for (auto it = m_editors.constBegin(); it != m_editors.constEnd(); ++it) {
    const core::FieldInfo* field = fieldAt(it.key());
    const bool inUse =
        field == nullptr || core::fieldApplies(*field, config) || it.value()->hasError();
    it.value()->setEnabled(inUse);
    if (QLabel* label = m_labels.value(it.key())) label->setEnabled(inUse);
  }
}

void SetupPage::refreshModelKind() {
  const core::ModelKind model = m_config->config().model.kind;
  const QString kind = QString::fromLatin1(core::choiceName(model));
  const bool vqgan = model == core::ModelKind::Vqgan;
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

}  // namespace tb::app
