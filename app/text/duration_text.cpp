#include "app/text/duration_text.h"

#include <QLatin1Char>

#include <cmath>

namespace tb::app {

QString formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) {
    return QStringLiteral("?");
  }
  const auto total = static_cast<long long>(std::llround(seconds));
  const auto twoDigits = [](long long value) {
    return QStringLiteral("%1").arg(value, 2, 10, QLatin1Char('0'));
  };
  if (total < 60) {
    return QStringLiteral("%1s").arg(total);
  }
  if (total < 3600) {
    return QStringLiteral("%1m%2s").arg(total / 60).arg(twoDigits(total % 60));
  }
  if (total < 86400) {
    return QStringLiteral("%1h%2m").arg(total / 3600).arg(twoDigits((total % 3600) / 60));
  }
  return QStringLiteral("%1d%2h").arg(total / 86400).arg(twoDigits((total % 86400) / 3600));
}

}  // namespace tb::app
