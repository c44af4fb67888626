#include "core/reference_codec_info.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace tb::core {

std::string toJsonText(const ReferenceCodecInfo& info) {
  nlohmann::ordered_json j = {{"name", info.name},
                              {"kind", info.kind},
                              {"bits_per_token", info.bits_per_token},
                              {"codebook_size", info.codebook_size},
                              {"codebooks", info.codebooks},
                              {"token_grid", info.token_grid},
                              {"fit_blocks", info.fit_blocks},
                              {"fit_clips", info.fit_clips},
                              {"fit_seconds", info.fit_seconds},
                              {"seed", info.seed},
                              {"valid_clips", info.valid_clips}};
  if (info.valid_psnr) j["valid_psnr"] = *info.valid_psnr;
  if (info.valid_ssim) j["valid_ssim"] = *info.valid_ssim;
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
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return fail("not a JSON object");
  ReferenceCodecInfo info;
  try {
    info.name = j.at("name").get<std::string>();
    info.kind = j.value("kind", info.kind);
    info.bits_per_token = j.at("bits_per_token").get<double>();
    info.codebook_size = j.at("codebook_size").get<std::int64_t>();
    info.codebooks = j.value("codebooks", info.codebooks);
    if (j.contains("token_grid"))
      info.token_grid = j["token_grid"].get<std::array<std::int64_t, 3>>();
    info.fit_blocks = j.value("fit_blocks", info.fit_blocks);
    info.fit_clips = j.value("fit_clips", info.fit_clips);
    info.fit_seconds = j.value("fit_seconds", info.fit_seconds);
    info.seed = j.value("seed", info.seed);
    info.valid_clips = j.value("valid_clips", info.valid_clips);
    if (j.contains("valid_psnr")) info.valid_psnr = j["valid_psnr"].get<double>();
    if (j.contains("valid_ssim")) info.valid_ssim = j["valid_ssim"].get<double>();
  } catch (const nlohmann::json::exception& e) {
    return fail(e.what());
  }
  return info;
}

}  // namespace tb::core
