// What the Setup page knows about the configuration's fields, beyond what core::configSchema()
// says: which group box of which panel each key is edited in (groupRules), which keys are in
// use for the values of others (SetupPage::refreshDependentFields), which architecture the
// model uses (SetupPage::refreshModelKind), and the keys edited by hand (specialKeys).

#include "app/gui/pages/setup/field_rules.h"

#include "app/gui/pages/config_field_editor.h"
#include "app/gui/pages/setup/setup_page.h"
#include "widgets/layer_stack_editor.h"

#include <QGroupBox>
#include <QLabel>

#include <map>
#include <vector>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

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

}  // namespace

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

QStringList SetupPage::specialKeys() {
  return {QStringLiteral("version"), QStringLiteral("model.layers")};
}

void SetupPage::refreshDependentFields() {
  const auto text = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString();
  };
  const auto positive = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_number() && v.get<double>() > 0;
  };
  const auto on = [this](const char* path) {
    const Json v = value(QString::fromLatin1(path));
    return v.is_boolean() && v.get<bool>();
  };
  // Keys that only matter for some values of another key (as their documentation says) are
  // greyed out otherwise. A key with a problem stays editable so that it can be fixed.
  const bool gan = positive("loss.adversarial_weight");
  const std::map<QString, bool> used = {
      {QStringLiteral("data.path"), text("data.type") != QLatin1String("synthetic")},
      {QStringLiteral("data.valid_path"), text("data.type") != QLatin1String("synthetic")},
      {QStringLiteral("data.valid_fraction"),
       text("data.type") == QLatin1String("synthetic") || text("data.valid_path").isEmpty()},
      {QStringLiteral("data.synthetic_clips"), text("data.type") == QLatin1String("synthetic")},
      {QStringLiteral("model.discriminator.patchgan_layers"),
       text("model.discriminator.type") == QLatin1String("patchgan")},
      {QStringLiteral("loss.perceptual_net"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.lpips_backbone"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.lpips_lin"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.perceptual_frames"), positive("loss.perceptual_weight")},
      {QStringLiteral("loss.adaptive_weight"), gan},
      {QStringLiteral("loss.adaptive_weight_max"), gan && on("loss.adaptive_weight")},
      {QStringLiteral("loss.discr_start_step"), gan},
      {QStringLiteral("loss.r1_weight"), gan},
      {QStringLiteral("loss.r1_every"), gan && positive("loss.r1_weight")},
      {QStringLiteral("loss.lecam_weight"), gan},
      {QStringLiteral("loss.lecam_decay"), gan && positive("loss.lecam_weight")},
      {QStringLiteral("train.discr_lr"), gan},
      {QStringLiteral("train.min_lr_ratio"),
       text("train.schedule").startsWith(QLatin1String("cosine"))},
      {QStringLiteral("train.ema_beta"), on("train.ema")},
      {QStringLiteral("train.ema_update_every"), on("train.ema")},
      {QStringLiteral("train.ema_start_step"), on("train.ema")},
  };
  const QString quantizer = text("model.quantizer.type");
  for (auto it = m_editors.constBegin(); it != m_editors.constEnd(); ++it) {
    const QString& path = it.key();
    bool inUse = true;
    if (const auto rule = used.find(path); rule != used.end()) inUse = rule->second;
    if (path.startsWith(QLatin1String("model.quantizer.fsq_"))) {
      inUse = quantizer == QLatin1String("fsq");
    }
    if (path.startsWith(QLatin1String("model.quantizer.vq_"))) {
      inUse = quantizer == QLatin1String("vq");
    }
    inUse = inUse || it.value()->hasError();
    it.value()->setEnabled(inUse);
    if (QLabel* label = m_labels.value(path)) label->setEnabled(inUse);
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

}  // namespace tb::app
