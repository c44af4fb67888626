#include "core/data_info.h"

#include "core/detail/document_json.h"

namespace tb::core {

nlohmann::ordered_json toJson(const DataInfo& info) {
  return detail::writeVersionedDocument(info, kDataInfoVersion);
}

std::optional<DataInfo> parseDataInfo(std::string_view text, std::string* error) {
  return detail::readVersionedDocument<DataInfo>(text, kDataInfoVersion, "data-info", error);
}

}  // namespace tb::core
