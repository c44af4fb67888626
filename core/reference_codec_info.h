#pragma once
// reference.json: what a classic VQ reference codec folder says about itself (its name, bits,
// how it was fitted and its held-out scores). The trainer writes it; the window reads it to draw
// the reference line on the validation PSNR curve.

#include "core/document_field.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace tb::core {

struct ReferenceCodecInfo {
  std::string name;  ///< "classic VQ, 10 bits/token"
  std::string kind = "classic_vq";
  double bits_per_token = 0;                 ///< log2(codebook_size)
  std::int64_t codebook_size = 0;            ///< centroids per codebook
  std::int64_t codebooks = 1;                ///< 2 when first-frame blocks have their own
  std::array<std::int64_t, 3> token_grid{};  ///< [t, h, w] per clip
  std::int64_t fit_blocks = 0;               ///< blocks k-means saw (both codebooks)
  std::int64_t fit_clips = 0;                ///< training clips they came from
  double fit_seconds = 0;                    ///< collecting blocks + k-means, wall clock
  std::uint64_t seed = 0;
  /// Held-out scores on the run's validation clips, computed as `valid/psnr` and `valid/ssim`
  /// are (mean over clips of the mean per-frame PSNR in dB / SSIM on 8-bit frames); absent when
  /// the configuration has no validation clips.
  std::optional<double> valid_psnr, valid_ssim;
  std::int64_t valid_clips = 0;

  /// The file's keys, in order. Only "name", "bits_per_token" and "codebook_size" are required.
  template <class V>
  void describe(V& v) {
    v.field("name", name);
    v.field("kind", kind, DocField().optional());
    v.field("bits_per_token", bits_per_token);
    v.field("codebook_size", codebook_size);
    v.field("codebooks", codebooks, DocField().optional());
    v.field("token_grid", token_grid, DocField().optional());
    v.field("fit_blocks", fit_blocks, DocField().optional());
    v.field("fit_clips", fit_clips, DocField().optional());
    v.field("fit_seconds", fit_seconds, DocField().optional());
    v.field("seed", seed, DocField().optional());
    v.field("valid_clips", valid_clips, DocField().optional());
    v.field("valid_psnr", valid_psnr);
    v.field("valid_ssim", valid_ssim);
  }
};

/// The JSON text of `info` (one object, 2-space indented, trailing newline).
std::string toJsonText(const ReferenceCodecInfo& info);

/// Reads `file`; std::nullopt when it is missing, unreadable or malformed (then `error`, when
/// given, says why, naming the file).
std::optional<ReferenceCodecInfo> readReferenceCodecInfo(const std::filesystem::path& file,
                                                         std::string* error = nullptr);

}  // namespace tb::core
