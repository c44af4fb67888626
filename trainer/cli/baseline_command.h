#pragma once
// The `baseline` subcommand: fits the classic VQ reference codec (k-means of pixel blocks) at a
// configuration's own token grid and bits per token, on its training data, and writes a codec
// folder that compare, tokenize, detokenize and the window accept beside tokenizers.

#include <cstdint>
#include <optional>
#include <string>

namespace tb::trainer::cli {

struct BaselineArgs {
  std::string config;                 ///< a configuration file, or - for standard input
  std::string preset;                 ///< or a preset name
  std::string out;                    ///< codec folder to write (created; its files are replaced)
  std::optional<std::uint64_t> seed;  ///< k-means seed; default train.seed
  std::int64_t blocks = std::int64_t{1} << 20;  ///< blocks per codebook at most
  int iterations = 15;                          ///< Lloyd iterations per codebook
};

/// `baseline`: reads the configuration's data (training split, in training order, with its crops
/// and flips), fits the codec (baseline::fitReferenceCodec), scores it on the first
/// train.valid_clips validation clips and writes `out` (config.json, codec.safetensors,
/// reference.json). Prints reference.json as one JSON line on stdout, progress on stderr.
/// Exit 0; 2 for a bad configuration or unusable data (the message names the field or file);
/// 1 when the folder cannot be written.
int baseline(const BaselineArgs& args);

}  // namespace tb::trainer::cli
