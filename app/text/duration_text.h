#pragma once
// core::formatDuration as a QString, for the window and the headless runner's lines.

#include <QString>

namespace tb::app {

/// core::formatDuration: "12s", "4m18s", "1h02m", "2d05h"; "?" for NaN, infinity or < 0.
QString formatDuration(double seconds);

}  // namespace tb::app
