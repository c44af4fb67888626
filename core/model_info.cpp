#include "core/model_info.h"

#include "core/config_io.h"
#include "core/detail/document_fields.h"

namespace tb::core {
namespace detail {

Json readDocumentObject(std::string_view text, int version) {
  Json doc;
  if (const auto problem = readConfigDocument(text, doc))
    throw std::runtime_error(problem->message);
  if (!doc.is_object()) throw std::runtime_error("not a JSON object");
  if (const auto v = doc.find("version"); v != doc.end() && *v != Json(version)) {
    throw std::runtime_error("version " + v->dump() + ", this build reads " +
                             std::to_string(version));
  }
  return doc;
}

}  // namespace detail

using detail::Json;

Json toJson(const ModelInfo& info) {
  Json j;
  j["version"] = kModelInfoVersion;
  j["kind"] = info.kind;
  j["params"] = {{"tokenizer", info.tokenizer_params},
                 {"encoder", info.encoder_params},
                 {"decoder", info.decoder_params},
                 {"quantizer", info.quantizer_params},
                 {"discriminator", info.discriminator_params}};
  j["input_shape"] = info.input_shape;
  j["token_grid"] = info.token_grid;
  j["tokens_per_clip"] = info.tokens_per_clip;
  j["bits_per_token"] = info.bits_per_token;
  j["compression_ratio"] = info.compression_ratio;
  j["forward_flops_per_clip"] = info.forward_flops_per_clip;
  j["batch_size"] = info.batch_size;
  j["peak_training_memory_bytes"] = info.peak_training_memory_bytes;
  return j;
}

std::optional<ModelInfo> parseModelInfo(std::string_view text, std::string* error) {
  try {
    const Json doc = detail::readDocumentObject(text, kModelInfoVersion);
    const Json& params = detail::documentField(doc, "params", &Json::is_object, "an object");
    ModelInfo info;
    info.kind = detail::documentString(doc, "kind");
    info.tokenizer_params = detail::documentInteger(params, "tokenizer");
    info.encoder_params = detail::documentInteger(params, "encoder");
    info.decoder_params = detail::documentInteger(params, "decoder");
    info.quantizer_params = detail::documentInteger(params, "quantizer");
    info.discriminator_params = detail::documentInteger(params, "discriminator");
    info.input_shape = detail::documentIntegers(doc, "input_shape");
    info.token_grid = detail::documentIntegers(doc, "token_grid");
    info.tokens_per_clip = detail::documentInteger(doc, "tokens_per_clip");
    info.bits_per_token = detail::documentNumber(doc, "bits_per_token");
    info.compression_ratio = detail::documentNumber(doc, "compression_ratio");
    info.forward_flops_per_clip = detail::documentNumber(doc, "forward_flops_per_clip");
    info.batch_size = static_cast<int>(detail::documentInteger(doc, "batch_size"));
    info.peak_training_memory_bytes = detail::documentInteger(doc, "peak_training_memory_bytes");
    return info;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string("model-info: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace tb::core
