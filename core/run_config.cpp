#include "core/run_config.h"

#include "core/detail/config_values.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tb::core {

const std::vector<std::string>& magvitLayerVocabulary() {
  static const std::vector<std::string> k = {"residual",
                                             "consecutive_residual",
                                             "cond_residual",
                                             "compress_space",
                                             "compress_time",
                                             "attend_space",
                                             "linear_attend_space",
                                             "attend_time",
                                             "gateloop_time",
                                             "cond_attend_space",
                                             "cond_linear_attend_space",
                                             "cond_attend_time"};
  return k;
}

const std::vector<std::string>& zero3UnitVocabulary() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> v = magvitLayerVocabulary();
    v.insert(v.end(), {"discr_block", "discr_attention", "all"});
    return v;
  }();
  return k;
}

bool layerRequiresArgument(const std::string& name) { return name == "consecutive_residual"; }

bool layerAcceptsArgument(const std::string& name) {
  return name == "consecutive_residual" || name == "compress_space" || name == "compress_time";
}

std::optional<DeviceSpec> parseDeviceSpec(const std::string& text) {
  if (text == "auto" || text == "cpu" || text == "cuda") return DeviceSpec{text, -1};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string digits = text.substr(prefix.size());
  if (digits.empty() || digits.size() > 4 || (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  int index = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + (c - '0');
  }
  if (index > 1023) return std::nullopt;
  return DeviceSpec{"cuda", index};
}

int countLayers(const std::vector<LayerSpec>& layers, const std::string& name) {
  return static_cast<int>(std::count_if(layers.begin(), layers.end(),
                                        [&](const LayerSpec& l) { return l.name == name; }));
}

namespace detail {

Json layerToJson(const LayerSpec& layer) {
  if (!layer.arg) return Json(layer.name);
  return Json::array({layer.name, *layer.arg});
}

std::string describeJson(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return std::string("boolean ") + (value.get<bool>() ? "true" : "false");
    case Json::value_t::string: {
      std::string s = value.get<std::string>();
      if (s.size() > 60) s = s.substr(0, 57) + "...";
      return "string " + Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return value.dump();
    case Json::value_t::array:
      return "a list";
    case Json::value_t::object:
      return "an object";
    default:
      return "a value";
  }
}

namespace {

void mismatch(const Json& value, const std::string& path, const char* expected,
              std::vector<ValueError>& errors) {
  errors.push_back({path, std::string("expected ") + expected + ", got " + describeJson(value)});
}

// Integral JSON numbers in int range; 3.0 is accepted as 3 (JSON writers differ), 3.5 is not.
bool asInt(const Json& value, int& out) {
  if (value.is_number_integer() || value.is_number_unsigned()) {
    if (value.is_number_unsigned()) {
      const auto u = value.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return false;
      out = static_cast<int>(u);
      return true;
    }
    const auto i = value.get<std::int64_t>();
    if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) return false;
    out = static_cast<int>(i);
    return true;
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::abs(d) <= std::numeric_limits<int>::max()) {
      out = static_cast<int>(d);
      return true;
    }
  }
  return false;
}

template <class T, class ReadOne>
void readList(const Json& value, const std::string& path, std::vector<T>& out, const char* expected,
              std::vector<ValueError>& errors, ReadOne readOne) {
  if (!value.is_array()) {
    mismatch(value, path, expected, errors);
    return;
  }
  std::vector<T> result;
  bool good = true;
  for (std::size_t i = 0; i < value.size(); ++i) {
    T item{};
    if (readOne(value[i], path + "[" + std::to_string(i) + "]", item)) {
      result.push_back(std::move(item));
    } else {
      good = false;
    }
  }
  if (good) out = std::move(result);
}

}  // namespace

void readValue(const Json& value, const std::string& path, bool& out,
               std::vector<ValueError>& errors) {
  if (value.is_boolean()) {
    out = value.get<bool>();
  } else {
    mismatch(value, path, "true or false", errors);
  }
}

void readValue(const Json& value, const std::string& path, int& out,
               std::vector<ValueError>& errors) {
  if (!asInt(value, out)) mismatch(value, path, "an integer", errors);
}

void readValue(const Json& value, const std::string& path, double& out,
               std::vector<ValueError>& errors) {
  if (value.is_number()) {
    out = value.get<double>();
  } else {
    mismatch(value, path, "a number", errors);
  }
}

void readValue(const Json& value, const std::string& path, std::string& out,
               std::vector<ValueError>& errors) {
  if (value.is_string()) {
    out = value.get<std::string>();
  } else {
    mismatch(value, path, "a string", errors);
  }
}

void readValue(const Json& value, const std::string& path, std::vector<int>& out,
               std::vector<ValueError>& errors) {
  readList(value, path, out, "a list of integers", errors,
           [&](const Json& v, const std::string& p, int& o) {
             if (asInt(v, o)) return true;
             mismatch(v, p, "an integer", errors);
             return false;
           });
}

void readValue(const Json& value, const std::string& path, std::vector<double>& out,
               std::vector<ValueError>& errors) {
  readList(value, path, out, "a list of numbers", errors,
           [&](const Json& v, const std::string& p, double& o) {
             if (v.is_number()) {
               o = v.get<double>();
               return true;
             }
             mismatch(v, p, "a number", errors);
             return false;
           });
}

void readValue(const Json& value, const std::string& path, std::vector<std::string>& out,
               std::vector<ValueError>& errors) {
  readList(value, path, out, "a list of strings", errors,
           [&](const Json& v, const std::string& p, std::string& o) {
             if (v.is_string()) {
               o = v.get<std::string>();
               return true;
             }
             mismatch(v, p, "a string", errors);
             return false;
           });
}

void readValue(const Json& value, const std::string& path, std::vector<LayerSpec>& out,
               std::vector<ValueError>& errors) {
  readList(value, path, out, "a list of layers", errors,
           [&](const Json& v, const std::string& p, LayerSpec& o) {
             if (v.is_string()) {
               o = LayerSpec{v.get<std::string>(), {}};
               return true;
             }
             int arg = 0;
             if (v.is_array() && v.size() == 2 && v[0].is_string() && asInt(v[1], arg)) {
               o = LayerSpec{v[0].get<std::string>(), arg};
               return true;
             }
             mismatch(v, p, "a layer name or a [name, integer] pair", errors);
             return false;
           });
}

}  // namespace detail
namespace when {

AppliesWhen folderData() {
  return {[](const RunConfig& c) { return c.data.type != DataType::Synthetic; },
          "data.type is not synthetic"};
}
AppliesWhen syntheticData() {
  return {[](const RunConfig& c) { return c.data.type == DataType::Synthetic; },
          "data.type is synthetic"};
}
AppliesWhen heldOutShare() {
  return {[](const RunConfig& c) {
            return c.data.type == DataType::Synthetic || c.data.valid_path.empty();
          },
          "data.type is synthetic or data.valid_path is empty"};
}
AppliesWhen patchGan() {
  return {
      [](const RunConfig& c) { return c.model.discriminator.type == DiscriminatorType::PatchGan; },
      "model.discriminator.type is patchgan"};
}
AppliesWhen fsq() {
  return {[](const RunConfig& c) { return c.model.quantizer.type == QuantizerType::Fsq; },
          "model.quantizer.type is fsq"};
}
AppliesWhen vq() {
  return {[](const RunConfig& c) { return c.model.quantizer.type == QuantizerType::Vq; },
          "model.quantizer.type is vq"};
}
AppliesWhen perceptual() {
  return {[](const RunConfig& c) { return c.loss.perceptual_weight > 0; },
          "loss.perceptual_weight > 0"};
}
AppliesWhen gan() {
  return {[](const RunConfig& c) { return c.loss.adversarial_weight > 0; },
          "loss.adversarial_weight > 0"};
}
AppliesWhen adaptiveWeight() {
  return {
      [](const RunConfig& c) { return c.loss.adversarial_weight > 0 && c.loss.adaptive_weight; },
      "loss.adversarial_weight > 0 and loss.adaptive_weight"};
}
AppliesWhen r1() {
  return {[](const RunConfig& c) { return c.loss.adversarial_weight > 0 && c.loss.r1_weight > 0; },
          "loss.adversarial_weight > 0 and loss.r1_weight > 0"};
}
AppliesWhen lecam() {
  return {
      [](const RunConfig& c) { return c.loss.adversarial_weight > 0 && c.loss.lecam_weight > 0; },
      "loss.adversarial_weight > 0 and loss.lecam_weight > 0"};
}
AppliesWhen cosine() {
  return {[](const RunConfig& c) { return c.train.schedule != Schedule::Constant; },
          "train.schedule is cosine or cosine_budget"};
}
AppliesWhen ema() {
  return {[](const RunConfig& c) { return c.train.ema; }, "train.ema"};
}

}  // namespace when

}  // namespace tb::core
