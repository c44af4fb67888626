#include "core/reference_codec_info.h"

#include "core/detail/document_json.h"

#include <fstream>

namespace tb::core {

std::string toJsonText(const ReferenceCodecInfo& info) {
  detail::Json j = detail::Json::object();
  detail::DocumentWriter writer(j);
  detail::describable(info).describe(writer);
  return j.dump(2) + "\n";
}

std::optional<ReferenceCodecInfo> readReferenceCodecInfo(const std::filesystem::path& file,
                                                         std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<ReferenceCodecInfo> {
    if (error != nullptr) *error = file.string() + ": " + why;
    return std::nullopt;
  };
  std::ifstream in(file);
  if (!in) return fail("cannot be read");
  const detail::Json j = detail::Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fail("not a JSON object");
  ReferenceCodecInfo info;
  try {
    detail::DocumentReader reader(j);
    info.describe(reader);
  } catch (const detail::FieldError& e) {
    return fail(detail::documentErrorText(e));
  }
  return info;
}

}  // namespace tb::core
