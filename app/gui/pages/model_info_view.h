#pragma once

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QWidget>

class QFormLayout;
class QLabel;

namespace tb::app {

/// The live summary of the model a configuration builds, from `tokenbench-trainer model-info`:
/// parameters per part, input shape, token grid, tokens per clip, bits per token, compression
/// ratio, forward FLOPs and the peak training memory estimate. While a newer answer is being
/// computed the last one stays, dimmed, under a "computing..." line; a failure shows the
/// trainer's message in red in place of the figures.
class ModelInfoView : public QWidget {
  Q_OBJECT

 public:
  enum class State { Empty, Computing, Ready, Failed };

  explicit ModelInfoView(QWidget* parent = nullptr);

  /// Nothing to show yet, with the reason ("No trainer found", ...).
  void setUnavailable(const QString& reason);
  void setComputing();
  /// Shows model-info's JSON. Returns false (and shows a failure) when it is not the expected
  /// object.
  bool setResult(const QByteArray& json);
  /// Shows a failure: the trainer's stderr, or what went wrong.
  void setError(const QString& message);

  State state() const { return m_state; }
  /// The status line above the figures ("computing...", the error, ...).
  QString statusText() const;
  /// The shown value of a figure: "tokenizer", "encoder", "decoder", "quantizer",
  /// "discriminator", "input_shape", "token_grid", "tokens_per_clip", "bits_per_token",
  /// "compression_ratio", "forward_flops_per_clip", "peak_training_memory_bytes".
  QString valueText(const QString& key) const;

  /// "1.36 M", "702 k", "940" — a count with an SI prefix, three significant digits.
  static QString formatCount(double value);
  /// "294.5 MiB" — bytes in binary units.
  static QString formatBytes(double bytes);

 private:
  void addRow(const QString& key, const QString& label, const QString& toolTip);
  void setFiguresVisible(bool visible, bool dimmed);

  State m_state = State::Empty;
  QLabel* m_status = nullptr;
  QWidget* m_figures = nullptr;
  QFormLayout* m_form = nullptr;
  QHash<QString, QLabel*> m_values;
};

}  // namespace tb::app
