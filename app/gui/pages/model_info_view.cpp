#include "app/gui/pages/model_info_view.h"

#include "core/model_info.h"
#include "widgets/colours.h"

#include <QFormLayout>
#include <QGraphicsOpacityEffect>
#include <QLabel>
#include <QLocale>
#include <QPalette>
#include <QStringList>
#include <QVBoxLayout>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb::app {
namespace {

QString joinShape(const std::vector<std::int64_t>& shape) {
  QStringList parts;
  for (const std::int64_t v : shape) parts << QString::number(v);
  return parts.join(QStringLiteral(" \u00d7 "));
}

QString trimmedNumber(double value, int decimals) {
  QString text = QString::number(value, 'f', decimals);
  if (text.contains(QLatin1Char('.'))) {
    while (text.endsWith(QLatin1Char('0'))) text.chop(1);
    if (text.endsWith(QLatin1Char('.'))) text.chop(1);
  }
  return text;
}

}  // namespace

ModelInfoView::ModelInfoView(QWidget* parent) : QWidget(parent) {
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("modelInfoStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  m_figures = new QWidget(this);
  m_form = new QFormLayout(m_figures);
  m_form->setContentsMargins(0, 0, 0, 0);
  m_form->setHorizontalSpacing(16);
  m_form->setVerticalSpacing(6);
  m_form->setLabelAlignment(Qt::AlignLeft);

  addRow(QStringLiteral("tokenizer"), tr("Tokenizer parameters"),
         tr("Encoder, decoder and quantizer: what training updates and tokenize uses"));
  addRow(QStringLiteral("encoder"), tr("\u2003Encoder"), {});
  addRow(QStringLiteral("decoder"), tr("\u2003Decoder"), {});
  addRow(QStringLiteral("quantizer"), tr("\u2003Quantizer"), {});
  addRow(QStringLiteral("discriminator"), tr("Discriminator parameters"),
         tr("Trained alongside when the adversarial loss is on"));
  addRow(QStringLiteral("input_shape"), tr("Input (C \u00d7 T \u00d7 H \u00d7 W)"),
         tr("One clip as the model sees it"));
  addRow(QStringLiteral("token_grid"), tr("Token grid (t \u00d7 h \u00d7 w)"),
         tr("Latent positions per clip after the compress_* layers"));
  addRow(QStringLiteral("tokens_per_clip"), tr("Tokens per clip"), {});
  addRow(QStringLiteral("bits_per_token"), tr("Bits per token"),
         tr("log2 of the codebook size, times the number of codebooks"));
  addRow(QStringLiteral("compression_ratio"), tr("Compression ratio"),
         tr("Bits of the 8-bit input clip divided by the bits of its tokens"));
  addRow(QStringLiteral("forward_flops_per_clip"), tr("Forward FLOPs per clip"),
         tr("Tokenizer forward pass (encode + decode) for one clip"));
  addRow(QStringLiteral("peak_training_memory_bytes"), tr("Peak training memory"),
         tr("Estimate for one rank at train.batch_size"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(10);
  layout->addWidget(m_status);
  layout->addWidget(m_figures);
  layout->addStretch(1);

  setUnavailable(tr("Not computed yet."));
}

void ModelInfoView::addRow(const QString& key, const QString& label, const QString& toolTip) {
  auto* value = new QLabel(QStringLiteral("\u2014"), m_figures);
  value->setObjectName(QStringLiteral("modelInfo:") + key);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  auto* name = new QLabel(label, m_figures);
  name->setToolTip(toolTip);
  value->setToolTip(toolTip);
  m_form->addRow(name, value);
  m_values.insert(key, value);
}

void ModelInfoView::setUnavailable(const QString& reason) {
  m_state = State::Empty;
  m_status->setText(reason);
  m_status->setForegroundRole(QPalette::PlaceholderText);
  m_status->setPalette(QPalette());
  setFiguresVisible(false, false);
}

void ModelInfoView::setComputing() {
  m_state = State::Computing;
  m_status->setText(tr("computing\u2026"));
  m_status->setPalette(QPalette());
  m_status->setForegroundRole(QPalette::PlaceholderText);
  // The previous figures stay readable but dimmed until the new ones arrive.
  const bool had = m_values.value(QStringLiteral("tokenizer"))->text() != QStringLiteral("\u2014");
  setFiguresVisible(had, true);
}

bool ModelInfoView::setResult(const QByteArray& json) {
  std::string problem;
  const std::optional<core::ModelInfo> info =
      core::parseModelInfo(std::string_view(json.constData(), json.size()), &problem);
  if (!info) {
    setError(
        tr("model-info printed something other than the expected JSON object (%1): %2")
            .arg(QString::fromStdString(problem), QString::fromUtf8(json.left(200)).trimmed()));
    return false;
  }
  m_state = State::Ready;
  const std::pair<const char*, std::int64_t> params[] = {
      {"tokenizer", info->tokenizer_params},
      {"encoder", info->encoder_params},
      {"decoder", info->decoder_params},
      {"quantizer", info->quantizer_params},
      {"discriminator", info->discriminator_params}};
  for (const auto& [part, count] : params) {
    const QString key = QString::fromLatin1(part);
    m_values[key]->setText(formatCount(static_cast<double>(count)));
    m_values[key]->setToolTip(QLocale::c().toString(qint64(count)));
  }
  m_values[QStringLiteral("input_shape")]->setText(joinShape(info->input_shape));
  m_values[QStringLiteral("token_grid")]->setText(joinShape(info->token_grid));
  m_values[QStringLiteral("tokens_per_clip")]->setText(
      QLocale::c().toString(qint64(info->tokens_per_clip)));
  m_values[QStringLiteral("bits_per_token")]->setText(trimmedNumber(info->bits_per_token, 2));
  m_values[QStringLiteral("compression_ratio")]->setText(
      tr("%1 \u00d7").arg(trimmedNumber(info->compression_ratio, 1)));
  m_values[QStringLiteral("forward_flops_per_clip")]->setText([](const QString& count) {
    return count + (count.contains(QLatin1Char(' ')) ? QString() : QStringLiteral(" ")) +
           QStringLiteral("FLOP");
  }(formatCount(info->forward_flops_per_clip)));
  m_values[QStringLiteral("peak_training_memory_bytes")]->setText(
      tr("%1 (batch %2)")
          .arg(formatBytes(static_cast<double>(info->peak_training_memory_bytes)))
          .arg(info->batch_size));
  const QString kind = QString::fromStdString(info->kind);
  m_status->setText(kind.isEmpty()
                        ? tr("From tokenbench-trainer model-info")
                        : tr("%1 tokenizer, from tokenbench-trainer model-info")
                              .arg(kind == QLatin1String("vqgan") ? QStringLiteral("VQGAN")
                                                                  : QStringLiteral("MAGVIT-v2")));
  m_status->setPalette(QPalette());
  m_status->setForegroundRole(QPalette::PlaceholderText);
  setFiguresVisible(true, false);
  return true;
}

void ModelInfoView::setError(const QString& message) {
  m_state = State::Failed;
  m_status->setText(message);
  QPalette palette = m_status->palette();
  palette.setColor(QPalette::WindowText, widgets::colours::error());
  m_status->setPalette(palette);
  m_status->setForegroundRole(QPalette::WindowText);
  setFiguresVisible(false, false);
}

QString ModelInfoView::statusText() const { return m_status->text(); }

QString ModelInfoView::valueText(const QString& key) const {
  const QLabel* label = m_values.value(key);
  return label == nullptr ? QString() : label->text();
}

QString ModelInfoView::formatCount(double value) {
  static const char* const kPrefixes[] = {"", " k", " M", " G", " T", " P"};
  int prefix = 0;
  double scaled = value;
  while (std::abs(scaled) >= 999.5 && prefix < 5) {
    scaled /= 1000.0;
    ++prefix;
  }
  const int decimals = std::abs(scaled) >= 99.95 ? 0 : std::abs(scaled) >= 9.995 ? 1 : 2;
  const QString digits =
      prefix == 0 ? QString::number(std::llround(value)) : trimmedNumber(scaled, decimals);
  return digits + QString::fromLatin1(kPrefixes[prefix]);
}

QString ModelInfoView::formatBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(
      unit == 0 ? QString::number(bytes, 'f', 0) : QString::number(bytes, 'f', 1),
      QString::fromLatin1(kUnits[unit]));
}

void ModelInfoView::setFiguresVisible(bool visible, bool dimmed) {
  m_figures->setVisible(visible);
  if (dimmed) {
    auto* effect = new QGraphicsOpacityEffect(m_figures);
    effect->setOpacity(0.45);
    m_figures->setGraphicsEffect(effect);  // takes ownership, replaces any earlier one
  } else {
    m_figures->setGraphicsEffect(nullptr);
  }
}

}  // namespace tb::app
