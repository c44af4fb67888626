#pragma once
// The one way Tokenbench writes a duration (ETAs, "no output for ...", stop grace): the window,
// the headless runner and the trainer's progress lines alike.

#include <string>

namespace tb::core {

/// "12s", "4m18s", "1h02m", "2d05h" (rounded to the second, then cut to two units); "?" for NaN,
/// infinity or a negative value.
std::string formatDuration(double seconds);

}  // namespace tb::core
