#pragma once
// The one way the front end writes a duration (ETAs, "no output for ...", stop grace), in the
// window and in the headless runner's lines alike.

#include <QString>

namespace tb::app {

/// "12s", "4m18s", "1h02m", "2d05h" (rounded to the second, then cut to two units); "?" for NaN,
/// infinity or a negative value.
QString formatDuration(double seconds);

}  // namespace tb::app
