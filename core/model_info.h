#pragma once
// The model-info document: what `tokenbench-trainer model-info` prints (stdout, one JSON object)
// and the Setup page shows. Both sides use this struct and its JSON, tested against
// tests/golden/model_info_v1.json.
//
//   {"version":1,"kind":"magvit2","params":{"tokenizer":..,"encoder":..,"decoder":..,
//    "quantizer":..,"discriminator":..},"input_shape":[C,T,H,W],"token_grid":[t,h,w],
//    "tokens_per_clip":..,"bits_per_token":..,"compression_ratio":..,
//    "forward_flops_per_clip":..,"batch_size":..,"peak_training_memory_bytes":..}
//
// Readers accept a document without "version" (trainers before it) and refuse another version.

#include "core/document_field.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// Version of the model-info document this build writes and reads.
inline constexpr int kModelInfoVersion = 1;

struct ModelInfo {
  std::string kind;  ///< "magvit2" or "vqgan"
  /// Trainable parameters per part; tokenizer = encoder + decoder + quantizer.
  std::int64_t tokenizer_params = 0;
  std::int64_t encoder_params = 0;
  std::int64_t decoder_params = 0;
  std::int64_t quantizer_params = 0;
  std::int64_t discriminator_params = 0;
  std::vector<std::int64_t> input_shape;  ///< one clip: [C, T, H, W]
  std::vector<std::int64_t> token_grid;   ///< tokens per clip along [t, h, w]
  std::int64_t tokens_per_clip = 0;
  double bits_per_token = 0.0;
  double compression_ratio = 0.0;               ///< 8-bit input bits / token bits
  double forward_flops_per_clip = 0.0;          ///< tokenizer forward pass, FLOP
  int batch_size = 0;                           ///< train.batch_size the memory estimate assumes
  std::int64_t peak_training_memory_bytes = 0;  ///< estimate for one process, bytes

  /// The document's keys after "version", in order.
  template <class V>
  void describe(V& v) {
    v.field("kind", kind);
    v.object("params", [&](auto& params) {
      params.field("tokenizer", tokenizer_params);
      params.field("encoder", encoder_params);
      params.field("decoder", decoder_params);
      params.field("quantizer", quantizer_params);
      params.field("discriminator", discriminator_params);
    });
    v.field("input_shape", input_shape);
    v.field("token_grid", token_grid);
    v.field("tokens_per_clip", tokens_per_clip);
    v.field("bits_per_token", bits_per_token);
    v.field("compression_ratio", compression_ratio);
    v.field("forward_flops_per_clip", forward_flops_per_clip);
    v.field("batch_size", batch_size);
    v.field("peak_training_memory_bytes", peak_training_memory_bytes);
  }
};

/// The document: "version", then the keys of ModelInfo::describe.
nlohmann::ordered_json toJson(const ModelInfo& info);

/// Reads a document (JSON text). Returns nullopt, with the reason in `error` when given (e.g.
/// `model-info: missing "token_grid"`), for anything else. Never throws.
std::optional<ModelInfo> parseModelInfo(std::string_view text, std::string* error = nullptr);

}  // namespace tb::core
