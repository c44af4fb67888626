#include "core/model_info.h"

#include "core/config_io.h"

namespace tb::core {
namespace {

using Json = nlohmann::ordered_json;

// Reads the fields of one document; throws std::runtime_error naming the first bad field.
class Reader {
 public:
  explicit Reader(const Json& doc) : m_doc(doc) {}

  const Json& field(const Json& object, const char* key, bool (Json::*isType)() const,
                    const char* what) const {
    const auto it = object.find(key);
    if (it == object.end()) throw std::runtime_error(std::string("missing \"") + key + "\"");
    if (!((*it).*isType)()) {
      throw std::runtime_error(std::string("\"") + key + "\" is not " + what);
    }
    return *it;
  }
  std::int64_t integer(const Json& object, const char* key) const {
    return field(object, key, &Json::is_number_integer, "an integer").get<std::int64_t>();
  }
  double number(const Json& object, const char* key) const {
    return field(object, key, &Json::is_number, "a number").get<double>();
  }
  std::vector<std::int64_t> integers(const char* key) const {
    std::vector<std::int64_t> values;
    for (const Json& v : field(m_doc, key, &Json::is_array, "an array")) {
      if (!v.is_number_integer()) {
        throw std::runtime_error(std::string("\"") + key + "\" holds a non-integer");
      }
      values.push_back(v.get<std::int64_t>());
    }
    return values;
  }

 private:
  const Json& m_doc;
};

}  // namespace

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
    Json doc;
    if (const auto problem = readConfigDocument(text, doc)) throw std::runtime_error(problem->message);
    if (!doc.is_object()) throw std::runtime_error("not a JSON object");
    if (const auto v = doc.find("version"); v != doc.end() && *v != Json(kModelInfoVersion)) {
      throw std::runtime_error("version " + v->dump() + ", this build reads " +
                               std::to_string(kModelInfoVersion));
    }
    const Reader read(doc);
    const Json& params = read.field(doc, "params", &Json::is_object, "an object");
    ModelInfo info;
    info.kind = read.field(doc, "kind", &Json::is_string, "a string").get<std::string>();
    info.tokenizer_params = read.integer(params, "tokenizer");
    info.encoder_params = read.integer(params, "encoder");
    info.decoder_params = read.integer(params, "decoder");
    info.quantizer_params = read.integer(params, "quantizer");
    info.discriminator_params = read.integer(params, "discriminator");
    info.input_shape = read.integers("input_shape");
    info.token_grid = read.integers("token_grid");
    info.tokens_per_clip = read.integer(doc, "tokens_per_clip");
    info.bits_per_token = read.number(doc, "bits_per_token");
    info.compression_ratio = read.number(doc, "compression_ratio");
    info.forward_flops_per_clip = read.number(doc, "forward_flops_per_clip");
    info.batch_size = static_cast<int>(read.integer(doc, "batch_size"));
    info.peak_training_memory_bytes = read.integer(doc, "peak_training_memory_bytes");
    return info;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string("model-info: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace tb::core
