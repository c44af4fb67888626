#include "core/version.h"

namespace tb::core {

std::string versionString() { return TB_VERSION_STRING; }

}  // namespace tb::core
