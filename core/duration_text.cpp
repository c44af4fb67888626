#include "core/duration_text.h"

#include <cmath>
#include <cstdio>

namespace tb::core {

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long total = std::llround(seconds);
  char text[48];
  if (total < 60) {
    std::snprintf(text, sizeof text, "%llds", total);
  } else if (total < 3600) {
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  } else if (total < 86400) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, (total % 3600) / 60);
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", total / 86400, (total % 86400) / 3600);
  }
  return text;
}

}  // namespace tb::core
