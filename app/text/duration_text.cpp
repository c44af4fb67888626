#include "app/text/duration_text.h"

#include "core/duration_text.h"

namespace tb::app {

QString formatDuration(double seconds) {
  return QString::fromStdString(core::formatDuration(seconds));
}

}  // namespace tb::app
