#pragma once

#include "core/config_io.h"
#include "core/run_config.h"

#include <nlohmann/json.hpp>

#include <QObject>
#include <QString>
#include <QStringList>

#include <string_view>
#include <vector>

namespace tb::app {

/// The one model of a run configuration in the front end: the Setup page edits it, the
/// RunFollower holds the followed run's config.json in it, the Compare form reads a run's data
/// and LPIPS settings from it. Nothing else in app/ parses a configuration.
///
/// It holds one JSON document: every schema key (core's defaults where a file said nothing) plus
/// whatever unknown keys a loaded file had, so that validation can name them and a save keeps
/// them. Reading, validation and the typed view all go through core (core::readConfigDocument,
/// core::parseRunConfig), so the window and the trainer accept and refuse the same documents.
/// QtCore only; lives in one thread (reads of a run directory happen on a worker, which hands
/// the text to loadText()).
class ConfigDocument : public QObject {
  Q_OBJECT

 public:
  /// core's defaults (core::RunConfig{}), valid apart from the rules that need a data path.
  explicit ConfigDocument(QObject* parent = nullptr);

  // -- Loading -------------------------------------------------------------------------------

  /// Replaces the document with the configuration in `file`; keys it lacks take core's
  /// defaults. Returns false and keeps the document when the file cannot be read, is not a
  /// regular file (a FIFO is refused before it is opened, so loading never blocks on one), is
  /// not JSON or holds no JSON object; loadError() then says why and names the file.
  /// A document that reads but has invalid values loads (errors() lists them). Emits changed("").
  bool load(const QString& file);
  /// Same for `text` already read from `origin` (the file name the errors name).
  bool loadText(std::string_view text, const QString& origin);
  /// Back to core's defaults, from no file. Emits changed("").
  void clear();
  /// Replaces the document as it is (a preset's complete document). Emits changed("").
  void setDocument(nlohmann::ordered_json document);
  /// Why the last load()/loadText() failed ("cannot read <file>: No such file or directory",
  /// "<file>: invalid JSON: ...", "<file> holds no JSON object"); empty after a success.
  QString loadError() const { return m_loadError; }
  /// The file the document was last loaded from; empty for defaults and presets.
  QString file() const { return m_file; }

  // -- The document --------------------------------------------------------------------------

  const nlohmann::ordered_json& json() const { return m_json; }
  /// The document as text: two-space indent, final newline (what save() writes).
  QString text() const;
  /// The value at `path` ("train.lr", "model.quantizer.codebook_size"); null when absent.
  nlohmann::ordered_json value(const QString& path) const;
  /// Sets the value at `path` (created when absent), revalidates, emits changed(path).
  void setValue(const QString& path, const nlohmann::ordered_json& value);
  /// The JSON pointer of a dotted key path ("train.lr" -> "/train/lr").
  static nlohmann::ordered_json::json_pointer pointerOf(const QString& path);

  // -- Typed view and validation -------------------------------------------------------------

  /// What the document says, typed (core::parseRunConfig): values that were refused, and keys
  /// the document lacks, hold core's defaults.
  const core::RunConfig& config() const { return m_config; }
  /// Every problem core finds in the document: types, unknown keys, ranges, rules between keys.
  /// Each names its field ("train.batch_size", "model.layers[2]").
  const std::vector<core::ConfigError>& errors() const { return m_errors; }
  /// "path: message" for every error about `path` or a part of it ("model.layers" also gets
  /// "model.layers[2]: ..."); all of them for an empty path.
  QStringList errorTexts(const QString& path = QString()) const;
  bool isValid() const { return m_errors.empty(); }

  // -- Saving --------------------------------------------------------------------------------

  /// Writes text() to `file` atomically and durably (core::writeFileAtomically: a reader sees
  /// the old file or the whole new one). Returns false with `error` ("cannot write <file>:
  /// <reason>") when it cannot; the old file is then untouched.
  bool save(const QString& file, QString* error = nullptr) const;

 Q_SIGNALS:
  /// The document changed: the key at `path`, or the whole document when `path` is empty.
  void changed(const QString& path);

 private:
  void revalidate();
  bool refuse(const QString& why);

  nlohmann::ordered_json m_json;
  core::RunConfig m_config;
  std::vector<core::ConfigError> m_errors;
  QString m_loadError;
  QString m_file;
};

}  // namespace tb::app
