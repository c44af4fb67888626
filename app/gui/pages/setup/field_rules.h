#pragma once

#include <QString>

namespace tb::app {

/// The title of the Setup group box that edits configuration key `path` ("data.path" ->
/// "Source"); a key no rule places goes to its section's "Other: <section>" group, so that a key
/// added to the schema always gets an editor somewhere. The rules are in field_rules.cpp.
QString groupTitleFor(const QString& path);

}  // namespace tb::app
