#pragma once

#include <QString>

namespace tb::app {

/// The title of the Setup group box that edits configuration key `path` ("data.path" ->
/// "Source"): the key's core::fieldGroup; a key without one goes to its section's
/// "Other: <section>" group, so that a key added to the schema always gets an editor somewhere.
QString groupTitleFor(const QString& path);

}  // namespace tb::app
