#pragma once
// Names of the wire (core/metric_names.h, core/run_directory.h) as Qt strings: the window spells
// no metric name, event code or run-directory file name itself.

#include "core/run_directory.h"

#include <QByteArray>
#include <QFile>
#include <QLatin1String>
#include <QString>

#include <filesystem>
#include <string_view>

namespace tb::app {

/// `name` (ASCII: a metric name or an event code) as a QString.
inline QString wireText(std::string_view name) {
  return QLatin1String(name.data(), static_cast<qsizetype>(name.size()));
}

/// A file-system path as the window shows and opens it (local 8-bit encoding).
inline QString pathText(const std::filesystem::path& path) {
  return QFile::decodeName(QByteArray::fromStdString(path.string()));
}

/// A path the window holds as a file-system path (the inverse of pathText()).
inline std::filesystem::path fileSystemPath(const QString& path) {
  return std::filesystem::path(QFile::encodeName(path).toStdString());
}

/// The run directory at `dir` ("" is the current directory, as core reads it).
inline core::RunDirectory runDirectoryAt(const QString& dir) {
  return core::RunDirectory(fileSystemPath(dir));
}

}  // namespace tb::app
