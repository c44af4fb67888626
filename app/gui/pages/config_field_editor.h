#pragma once

#include "core/config_schema.h"

#include <nlohmann/json.hpp>

#include <QList>
#include <QString>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace tb::app {

/// The input generated for one leaf key of the run configuration (core::FieldInfo), chosen by
/// its FieldType: a check box (Bool), a spin box limited to the key's range (Int), a text field
/// read as a number so that 1e-4 and 0.999999 both fit (Number), a drop-down of the allowed
/// values or a text field (String), one spin box per entry for fixed-length integer lists and a
/// comma-separated text field for other lists.
///
/// The editor holds no configuration of its own: setValue() shows a JSON value, value() reads
/// what is shown back as JSON, and edited() says the user changed it. Text that does not read
/// as the key's type comes back as a JSON string, so that core validation reports it ("expected
/// a number, got string ...") like any other problem. setError() outlines the input in red and
/// puts the message in its tooltip.
class ConfigFieldEditor : public QWidget {
  Q_OBJECT

 public:
  /// What a Browse... button beside a text field picks.
  enum class Browse { None, Directory, File };

  explicit ConfigFieldEditor(core::FieldInfo field, QWidget* parent = nullptr);

  const core::FieldInfo& field() const { return m_field; }
  /// JSON path of the key, e.g. "train.lr".
  QString path() const;
  /// "Learning rate" style label for the key, with its unit: "Image size (pixels)".
  QString labelText() const;

  /// Shows `value` without emitting edited(). A value of the wrong type shows the default.
  void setValue(const nlohmann::ordered_json& value);
  /// What the input shows, as JSON (a string when text does not read as the key's type).
  nlohmann::ordered_json value() const;

  /// Marks the input as bad with `message`, or clears the mark for "".
  void setError(const QString& message);
  QString error() const { return m_error; }
  bool hasError() const { return !m_error.isEmpty(); }

  /// Adds a Browse... button (text fields only) that picks a folder or a file.
  void setBrowse(Browse kind);
  /// The widget that takes focus when the editor is focused from the problem list.
  QWidget* input() const;
  /// Gives the input keyboard focus (and selects text fields' text).
  void focusInput();

  /// core::fieldLabel: "train.lr" -> "Learning rate", "data.num_frames" -> "Number of frames".
  static QString humanName(const core::FieldInfo& field);
  /// Tooltip: key path, documentation, allowed range or values, unit and default.
  static QString describe(const core::FieldInfo& field);

 Q_SIGNALS:
  /// The user changed the value; `path` is path().
  void edited(const QString& path);

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void build();
  void notifyEdited();
  void refreshToolTip();

  core::FieldInfo m_field;
  QString m_error;
  bool m_updating = false;
  QCheckBox* m_check = nullptr;
  QSpinBox* m_spin = nullptr;
  QList<QSpinBox*> m_spins;  // fixed-length integer lists
  QLineEdit* m_text = nullptr;
  QComboBox* m_combo = nullptr;
  QToolButton* m_browse = nullptr;
  Browse m_browseKind = Browse::None;
};

}  // namespace tb::app
