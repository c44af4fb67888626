#include "app/control/config_document.h"

#include "app/control/wire_text.h"
#include "core/atomic_file.h"

#include <QFile>

#include <utility>

namespace tb::app {
namespace {

using Json = nlohmann::ordered_json;

// `overlay` written over `base`: objects merge key by key (base's order first, new keys after),
// anything else replaces.
void mergeOver(Json& base, const Json& overlay) {
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    auto existing = base.find(it.key());
    if (existing != base.end() && existing->is_object() && it->is_object()) {
      mergeOver(*existing, *it);
    } else {
      base[it.key()] = *it;
    }
  }
}

// True when an error's path is `key` or a part of it: "model.layers[2]" and "model.layers.x"
// belong to "model.layers", "model.layers_x" does not.
bool isAbout(const std::string& errorPath, const std::string& key) {
  if (key.empty()) return true;
  if (errorPath.compare(0, key.size(), key) != 0) return false;
  return errorPath.size() == key.size() || errorPath[key.size()] == '[' ||
         errorPath[key.size()] == '.';
}

}  // namespace

ConfigDocument::ConfigDocument(QObject* parent)
    : QObject(parent), m_json(core::toJson(core::RunConfig{})) {
  revalidate();
}

bool ConfigDocument::load(const QString& file) {
  // A FIFO or a device would block or never end: refused before it is opened.
  if (const std::string kind = core::irregularFileKind(fileSystemPath(file)); !kind.empty()) {
    return refuse(tr("cannot read %1: it is %2").arg(file, QString::fromStdString(kind)));
  }
  QFile in(file);
  if (!in.open(QIODevice::ReadOnly)) {
    return refuse(tr("cannot read %1: %2").arg(file, in.errorString()));
  }
  const QByteArray bytes = in.readAll();
  if (in.error() != QFileDevice::NoError) {
    return refuse(tr("cannot read %1: %2").arg(file, in.errorString()));
  }
  return loadText(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())),
                  file);
}

bool ConfigDocument::loadText(std::string_view text, const QString& origin) {
  Json loaded;
  // The trainer's reader: nesting deep enough to overflow the stack is refused unparsed.
  if (const std::optional<core::ConfigError> problem = core::readConfigDocument(text, loaded)) {
    return refuse(QStringLiteral("%1: %2").arg(origin, QString::fromStdString(problem->message)));
  }
  if (!loaded.is_object()) {
    return refuse(tr("%1 holds no JSON object").arg(origin));
  }
  Json document = core::toJson(core::RunConfig{});
  mergeOver(document, loaded);
  m_loadError.clear();
  m_file = origin;
  setDocument(std::move(document));
  return true;
}

bool ConfigDocument::refuse(const QString& why) {
  m_loadError = why;
  return false;
}

void ConfigDocument::clear() {
  m_loadError.clear();
  m_file.clear();
  setDocument(core::toJson(core::RunConfig{}));
}

void ConfigDocument::setDocument(Json document) {
  m_json = std::move(document);
  revalidate();
  Q_EMIT changed(QString());
}

Json::json_pointer ConfigDocument::pointerOf(const QString& path) {
  std::string pointer;
  for (const QString& part : path.split(QLatin1Char('.'))) pointer += "/" + part.toStdString();
  return Json::json_pointer(pointer);
}

QString ConfigDocument::text() const { return QString::fromStdString(m_json.dump(2) + "\n"); }

Json ConfigDocument::value(const QString& path) const {
  const Json::json_pointer pointer = pointerOf(path);
  return m_json.contains(pointer) ? m_json.at(pointer) : Json();
}

void ConfigDocument::setValue(const QString& path, const Json& value) {
  m_json[pointerOf(path)] = value;
  revalidate();
  Q_EMIT changed(path);
}

QStringList ConfigDocument::errorTexts(const QString& path) const {
  const std::string key = path.toStdString();
  QStringList texts;
  for (const core::ConfigError& error : m_errors) {
    if (isAbout(error.path, key)) texts << QString::fromStdString(error.toString());
  }
  return texts;
}

bool ConfigDocument::save(const QString& file, QString* error) const {
  try {
    core::writeFileAtomically(fileSystemPath(file), m_json.dump(2) + "\n");
  } catch (const core::FileWriteError& e) {
    if (error != nullptr) {
      *error = tr("cannot write %1: %2").arg(file, QString::fromStdString(e.reason()));
    }
    return false;
  }
  return true;
}

void ConfigDocument::revalidate() {
  core::ConfigLoad load = core::parseRunConfig(m_json);
  m_config = std::move(load.config);
  m_errors = std::move(load.errors);
}

}  // namespace tb::app
