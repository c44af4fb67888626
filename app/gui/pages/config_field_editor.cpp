#include "app/gui/pages/config_field_editor.h"
#include "widgets/colours.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHash>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStringList>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kOutline = 2;  // pixels around the input where the error outline is drawn
// Width of a number's input (text, spin box) and least width of a drop-down: room for
// "0.0001" or 999999999, and narrow enough that a label of about 230 px and its input sit side
// by side in a Setup column of a 1024 px window.
constexpr int kFieldWidth = 110;
// Typed values may go this far past a key's range (validation marks them).
constexpr int kTypedLimit = 999999999;
constexpr const char* kLowProperty = "tbLow";
constexpr const char* kHighProperty = "tbHigh";

// A spin box whose arrows and keys stop at the key's range, while typing may go past it.
class RangeSpinBox : public QSpinBox {
 public:
  using QSpinBox::QSpinBox;

  void stepBy(int steps) override {
    const int low = property(kLowProperty).toInt();
    const int high = property(kHighProperty).toInt();
    const qint64 next = static_cast<qint64>(value()) + static_cast<qint64>(steps) * singleStep();
    if (value() >= low && value() <= high) {
      setValue(static_cast<int>(std::clamp<qint64>(next, low, high)));
    } else {
      QSpinBox::stepBy(steps);
    }
  }
};

QString number(double value) { return QString::number(value, 'g', 12); }

QString jsonText(const Json& value) {
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  return QString::fromStdString(value.dump());
}

int clampToInt(double value) {
  return static_cast<int>(std::clamp(value, double(std::numeric_limits<int>::min()),
                                     double(std::numeric_limits<int>::max())));
}

// Integer range of an Int key (or of each element of an integer list).
std::pair<int, int> intRange(const core::FieldSpec& spec) {
  int low = std::numeric_limits<int>::min();
  int high = std::numeric_limits<int>::max();
  if (spec.minValue()) low = clampToInt(std::ceil(*spec.minValue()));
  if (spec.aboveValue()) low = std::max(low, clampToInt(std::floor(*spec.aboveValue()) + 1));
  if (spec.maxValue()) high = clampToInt(std::floor(*spec.maxValue()));
  return {low, high};
}

QSpinBox* makeSpin(const core::FieldSpec& spec, QWidget* parent) {
  auto* spin = new RangeSpinBox(parent);
  // Any whole number can be typed: one outside the key's range is shown and marked with the
  // validator's message ("must be >= 1, got 0") rather than silently put back on Tab. The
  // arrows stop at the range.
  const auto [low, high] = intRange(spec);
  spin->setRange(std::min(low, -kTypedLimit), std::max(high, kTypedLimit));
  spin->setProperty(kLowProperty, low);
  spin->setProperty(kHighProperty, high);
  spin->setAccelerated(true);
  spin->setKeyboardTracking(true);
  spin->setAlignment(Qt::AlignRight);
  return spin;
}

// Widens a spin box's range so that a loaded value outside it is shown as it is (validation
// marks it) instead of silently clamped.
void showInSpin(QSpinBox* spin, int value) {
  if (value < spin->minimum()) spin->setMinimum(value);
  if (value > spin->maximum()) spin->setMaximum(value);
  spin->setValue(value);
}

QStringList splitList(const QString& text) {
  static const QRegularExpression kSeparators(QStringLiteral("[,\\s]+"));
  QString inner = text.trimmed();
  if (inner.startsWith(QLatin1Char('[')) && inner.endsWith(QLatin1Char(']'))) {
    inner = inner.mid(1, inner.size() - 2);
  }
  return inner.split(kSeparators, Qt::SkipEmptyParts);
}

bool isList(core::FieldType type) {
  return type == core::FieldType::IntList || type == core::FieldType::NumberList ||
         type == core::FieldType::StringList;
}

}  // namespace

ConfigFieldEditor::ConfigFieldEditor(core::FieldInfo field, QWidget* parent)
    : QWidget(parent), m_field(std::move(field)) {
  setObjectName(QStringLiteral("field:") + path());
  build();
  setValue(m_field.default_value);
  refreshToolTip();
}

QString ConfigFieldEditor::path() const { return QString::fromStdString(m_field.path); }

QString ConfigFieldEditor::labelText() const {
  const QString unit = QString::fromStdString(m_field.spec.unitName());
  const QString name = humanName(m_field);
  // "Number of frames", not "Number of frames (frames)".
  if (unit.isEmpty() ||
      name.section(QLatin1Char(' '), -1).compare(unit, Qt::CaseInsensitive) == 0) {
    return name;
  }
  return tr("%1 (%2)").arg(name, unit);
}

void ConfigFieldEditor::build() {
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(kOutline, kOutline, kOutline, kOutline);
  layout->setSpacing(4);
  const core::FieldSpec& spec = m_field.spec;
  switch (m_field.type) {
    case core::FieldType::Bool:
      m_check = new QCheckBox(this);
      connect(m_check, &QCheckBox::toggled, this, &ConfigFieldEditor::notifyEdited);
      layout->addWidget(m_check);
      layout->addStretch(1);
      return;
    case core::FieldType::Int:
      m_spin = makeSpin(spec, this);
      m_spin->setFixedWidth(kFieldWidth);
      connect(m_spin, &QSpinBox::valueChanged, this, &ConfigFieldEditor::notifyEdited);
      layout->addWidget(m_spin);
      layout->addStretch(1);
      return;
    case core::FieldType::String:
      if (!spec.allowed().empty()) {
        m_combo = new QComboBox(this);
        for (const std::string& choice : spec.allowed()) {
          m_combo->addItem(QString::fromStdString(choice));
        }
        m_combo->setMinimumWidth(kFieldWidth);
        connect(m_combo, &QComboBox::currentIndexChanged, this, &ConfigFieldEditor::notifyEdited);
        layout->addWidget(m_combo);
        layout->addStretch(1);
        return;
      }
      break;
    case core::FieldType::IntList:
      if (spec.requiredLength()) {
        for (int i = 0; i < *spec.requiredLength(); ++i) {
          auto* spin = makeSpin(spec, this);
          spin->setFixedWidth(90);
          connect(spin, &QSpinBox::valueChanged, this, &ConfigFieldEditor::notifyEdited);
          layout->addWidget(spin);
          m_spins.push_back(spin);
        }
        layout->addStretch(1);
        return;
      }
      break;
    case core::FieldType::Number:
    case core::FieldType::NumberList:
    case core::FieldType::StringList:
    case core::FieldType::LayerList:
      break;
  }
  m_text = new QLineEdit(this);
  m_text->setClearButtonEnabled(m_field.type == core::FieldType::String);
  if (m_field.type == core::FieldType::Number) m_text->setAlignment(Qt::AlignRight);
  if (isList(m_field.type)) m_text->setPlaceholderText(tr("empty list; comma-separated"));
  connect(m_text, &QLineEdit::textEdited, this, &ConfigFieldEditor::notifyEdited);
  if (m_field.type == core::FieldType::Number) {
    m_text->setFixedWidth(kFieldWidth);
    layout->addWidget(m_text);
    layout->addStretch(1);
  } else {
    layout->addWidget(m_text, 1);
  }
}

void ConfigFieldEditor::setBrowse(Browse kind) {
  if (m_text == nullptr || kind == Browse::None || m_browse != nullptr) return;
  m_browseKind = kind;
  m_browse = new QToolButton(this);
  m_browse->setObjectName(QStringLiteral("browse"));
  m_browse->setText(tr("Browse\u2026"));
  m_browse->setToolTip(kind == Browse::Directory ? tr("Choose a folder") : tr("Choose a file"));
  layout()->addWidget(m_browse);
  connect(m_browse, &QToolButton::clicked, this, [this] {
    const QString start = m_text->text();
    const QString chosen = m_browseKind == Browse::Directory
                               ? QFileDialog::getExistingDirectory(this, labelText(), start)
                               : QFileDialog::getOpenFileName(this, labelText(), start);
    if (chosen.isEmpty()) return;
    m_text->setText(chosen);
    m_text->setCursorPosition(0);  // a long path shows its start, not its last letters
    notifyEdited();
  });
}

void ConfigFieldEditor::setValue(const Json& value) {
  m_updating = true;
  const Json& fallback = m_field.default_value;
  switch (m_field.type) {
    case core::FieldType::Bool:
      m_check->setChecked(value.is_boolean() ? value.get<bool>() : fallback.get<bool>());
      break;
    case core::FieldType::Int:
      showInSpin(m_spin,
                 value.is_number_integer() ? clampToInt(value.get<double>()) : fallback.get<int>());
      break;
    case core::FieldType::String:
      if (m_combo != nullptr) {
        const QString text = value.is_string() ? jsonText(value) : jsonText(fallback);
        // Drop values outside the choices shown for an earlier document, then show this one
        // even if it is not allowed (validation marks it).
        for (int i = m_combo->count() - 1; i >= static_cast<int>(m_field.spec.allowed().size());
             --i) {
          m_combo->removeItem(i);
        }
        if (m_combo->findText(text) < 0) m_combo->addItem(text);
        m_combo->setCurrentIndex(m_combo->findText(text));
      } else {
        m_text->setText(value.is_string() ? jsonText(value) : jsonText(fallback));
      }
      break;
    case core::FieldType::Number:
      m_text->setText(value.is_number()   ? number(value.get<double>())
                      : value.is_string() ? jsonText(value)
                                          : number(fallback.get<double>()));
      break;
    case core::FieldType::IntList:
    case core::FieldType::NumberList:
    case core::FieldType::StringList: {
      const Json& list = value.is_array() ? value : fallback;
      if (!m_spins.isEmpty()) {
        for (int i = 0; i < m_spins.size(); ++i) {
          const auto index = static_cast<std::size_t>(i);
          const Json& element = index < list.size() && list[index].is_number_integer()
                                    ? list[index]
                                    : fallback[index];
          showInSpin(m_spins[i], clampToInt(element.get<double>()));
        }
        break;
      }
      if (value.is_string()) {  // text the user typed that did not read as a list
        m_text->setText(jsonText(value));
        break;
      }
      QStringList words;
      for (const Json& element : list) {
        words << (element.is_number() ? number(element.get<double>()) : jsonText(element));
      }
      m_text->setText(words.join(QStringLiteral(", ")));
      break;
    }
    case core::FieldType::LayerList:
      m_text->setText(jsonText(value));
      break;
  }
  // setText() leaves the cursor at the end, scrolling a long path to its last letters
  // ("…ideos"); a value shown, not typed, reads from its start.
  if (m_text != nullptr && !m_text->hasFocus()) m_text->setCursorPosition(0);
  m_updating = false;
}

Json ConfigFieldEditor::value() const {
  switch (m_field.type) {
    case core::FieldType::Bool:
      return m_check->isChecked();
    case core::FieldType::Int:
      return m_spin->value();
    case core::FieldType::String:
      return (m_combo != nullptr ? m_combo->currentText() : m_text->text()).toStdString();
    case core::FieldType::Number: {
      bool ok = false;
      const double v = QLocale::c().toDouble(m_text->text().trimmed(), &ok);
      if (ok && std::isfinite(v)) return v;
      return m_text->text().toStdString();
    }
    case core::FieldType::IntList:
    case core::FieldType::NumberList:
    case core::FieldType::StringList: {
      Json out = Json::array();
      if (!m_spins.isEmpty()) {
        for (const QSpinBox* spin : m_spins) out.push_back(spin->value());
        return out;
      }
      for (const QString& word : splitList(m_text->text())) {
        bool ok = false;
        if (m_field.type == core::FieldType::IntList) {
          const int v = word.toInt(&ok);
          if (!ok) return m_text->text().toStdString();
          out.push_back(v);
        } else if (m_field.type == core::FieldType::NumberList) {
          const double v = QLocale::c().toDouble(word, &ok);
          if (!ok) return m_text->text().toStdString();
          out.push_back(v);
        } else {
          out.push_back(word.toStdString());
        }
      }
      return out;
    }
    case core::FieldType::LayerList:
      break;
  }
  try {
    return Json::parse(m_text->text().toStdString());
  } catch (const Json::exception&) {
    return m_text->text().toStdString();
  }
}

void ConfigFieldEditor::setError(const QString& message) {
  if (message == m_error) return;
  m_error = message;
  refreshToolTip();
  update();
}

QWidget* ConfigFieldEditor::input() const {
  if (m_check != nullptr) return m_check;
  if (m_spin != nullptr) return m_spin;
  if (m_combo != nullptr) return m_combo;
  if (!m_spins.isEmpty()) return m_spins.front();
  return m_text;
}

void ConfigFieldEditor::focusInput() {
  input()->setFocus(Qt::OtherFocusReason);
  if (m_text != nullptr) m_text->selectAll();
  if (m_spin != nullptr) m_spin->selectAll();
}

QString ConfigFieldEditor::humanName(const core::FieldInfo& field) {
  return QString::fromStdString(core::fieldLabel(field));
}

QString ConfigFieldEditor::describe(const core::FieldInfo& field) {
  const core::FieldSpec& spec = field.spec;
  QStringList lines;
  lines << QStringLiteral("<b>%1</b> &nbsp;<i>%2</i>")
               .arg(QString::fromStdString(field.path).toHtmlEscaped(),
                    QString::fromLatin1(core::fieldTypeName(field.type)));
  lines << QString::fromStdString(spec.doc()).toHtmlEscaped();
  QStringList range;
  if (spec.minValue()) range << QStringLiteral("\u2265 %1").arg(number(*spec.minValue()));
  if (spec.aboveValue()) range << QStringLiteral("> %1").arg(number(*spec.aboveValue()));
  if (spec.maxValue()) range << QStringLiteral("\u2264 %1").arg(number(*spec.maxValue()));
  if (!range.isEmpty()) {
    lines << tr("Range: %1%2")
                 .arg(range.join(tr(" and ")),
                      isList(field.type) ? tr(" (each entry)") : QString());
  }
  if (spec.requiredLength()) lines << tr("Entries: exactly %1").arg(*spec.requiredLength());
  if (!spec.allowed().empty()) {
    QStringList choices;
    for (const std::string& c : spec.allowed()) choices << QString::fromStdString(c);
    lines << tr("One of: %1").arg(choices.join(QStringLiteral(", ")));
  }
  if (!spec.unitName().empty()) {
    lines << tr("Unit: %1").arg(QString::fromStdString(spec.unitName()).toHtmlEscaped());
  }
  const Json& d = field.default_value;
  QString defaultText = d.is_string()         ? jsonText(d)
                        : d.is_number_float() ? number(d.get<double>())
                                              : QString::fromStdString(d.dump());
  if (defaultText.isEmpty()) defaultText = tr("empty");
  lines << tr("Default: %1").arg(defaultText.toHtmlEscaped());
  if (const auto& when = spec.condition())
    lines << tr("Used only when %1").arg(QString::fromLatin1(when->text).toHtmlEscaped());
  return lines.join(QStringLiteral("<br>"));
}

void ConfigFieldEditor::paintEvent(QPaintEvent* event) {
  QWidget::paintEvent(event);
  if (m_error.isEmpty()) return;
  QPainter painter(this);
  painter.setRenderHint(QPainter::Antialiasing, true);
  painter.setPen(QPen(widgets::colours::error(), 2));
  painter.setBrush(Qt::NoBrush);
  QRect around = input()->geometry().adjusted(-1, -1, 1, 1);
  if (!m_spins.isEmpty()) around = around.united(m_spins.back()->geometry().adjusted(-1, -1, 1, 1));
  if (m_check != nullptr) around.setWidth(around.height());
  painter.drawRoundedRect(QRectF(around), 3, 3);
}

void ConfigFieldEditor::notifyEdited() {
  if (m_updating) return;
  Q_EMIT edited(path());
}

void ConfigFieldEditor::refreshToolTip() {
  QString tip = describe(m_field);
  if (!m_error.isEmpty()) {
    tip = QStringLiteral("<span style=\"color:%1\"><b>%2</b></span><br>%3")
              .arg(widgets::colours::error().name(), m_error.toHtmlEscaped(), tip);
  }
  setToolTip(tip);
  for (QWidget* child : findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
    if (child != m_browse) child->setToolTip(tip);
  }
}

}  // namespace tb::app
