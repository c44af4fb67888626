#pragma once
// Fitting the classic VQ reference codec for one run configuration: blocks cut from its training
// clips, k-means per codebook, scores on its validation clips, and the codec folder that compare,
// tokenize, detokenize and the window accept beside tokenizers.

#include "core/reference_codec_info.h"
#include "core/run_config.h"
#include "trainer/baseline/classic_vq_codec.h"
#include "trainer/data/clip_loader.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace tb::trainer::baseline {

struct ReferenceFitOptions {
  std::uint64_t seed = 0;
  /// Blocks per codebook k-means sees at most (cut from training clips in their order).
  std::int64_t blocks = std::int64_t{1} << 20;
  int iterations = 15;  ///< Lloyd iterations per codebook
  /// Validation clips scored (0: none). The run's train.valid_clips, as validation scores.
  std::int64_t valid_clips = 8;
};

struct ReferenceFit {
  std::shared_ptr<ClassicVqCodec> codec;
  core::ReferenceCodecInfo info;
};

/// Fits the codec at `config`'s token grid and bits (referenceShapeOf) on `dataset`'s training
/// clips, taken in training order (positions 0, 1, ...) until every codebook has `blocks` blocks
/// or four epochs are used (procedural data; 4096 clips at least from video and image folders,
/// whose random starts and crops make every position another clip): first-frame blocks come from
/// every frame (a frame coded alone), the others from latent frames 1 and later. Then scores the
/// `valid_clips` validation clips (ClipDataset::validPicks, as validation) with metrics::scoreClip.
/// `log` receives a line per stage; `progress` (stage, done, total) follows each stage as it
/// advances: blocks drawn of those needed, codebooks fitted, validation clips scored.
/// Deterministic for a seed and thread count. Throws std::invalid_argument (configuration) or
/// data::DataError (too little data).
using FitProgress =
    std::function<void(const std::string& stage, std::int64_t done, std::int64_t total)>;
ReferenceFit fitReferenceCodec(const core::RunConfig& config, data::ClipDataset& dataset,
                               const ReferenceFitOptions& options,
                               const std::function<void(const std::string&)>& log = {},
                               const FitProgress& progress = {});

/// Writes the codec folder `dir` (created): config.json (`config`), codec.safetensors and
/// reference.json, each written whole before it appears.
void writeReferenceFolder(const ReferenceFit& fit, const core::RunConfig& config,
                          const std::filesystem::path& dir);

}  // namespace tb::trainer::baseline
