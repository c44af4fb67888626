#include "core/model_info.h"

#include "core/detail/document_json.h"

namespace tb::core {

nlohmann::ordered_json toJson(const ModelInfo& info) {
  return detail::writeVersionedDocument(info, kModelInfoVersion);
}

std::optional<ModelInfo> parseModelInfo(std::string_view text, std::string* error) {
  return detail::readVersionedDocument<ModelInfo>(text, kModelInfoVersion, "model-info", error);
}

}  // namespace tb::core
