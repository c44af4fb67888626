#pragma once

#include <QRegularExpression>
#include <QString>

#include <utility>
#include <vector>

namespace tb::app {

/// Problems core validation found in a document: (path, message), the path as validation
/// writes it ("train.lr", "model.layers[3]", "" for the document).
using ConfigProblems = std::vector<std::pair<QString, QString>>;

/// The key a problem path is about: "model.layers[3]" -> "model.layers", with 3 in `index`
/// (-1 for a path without an index, which is its own key).
inline QString configKeyOf(const QString& path, int* index = nullptr) {
  static const QRegularExpression kIndex(QStringLiteral("^(.*?)\\[(\\d+)\\]"));
  const QRegularExpressionMatch m = kIndex.match(path);
  if (!m.hasMatch()) {
    if (index != nullptr) *index = -1;
    return path;
  }
  if (index != nullptr) *index = m.captured(2).toInt();
  return m.captured(1);
}

}  // namespace tb::app
