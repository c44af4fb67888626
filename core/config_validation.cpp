// validate(): the range rules every key declares in its FieldSpec, then the rules between keys.
#include "core/config_io.h"

#include "core/detail/config_values.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

namespace tb::core {
namespace {

using detail::joinPath;

std::string formatNumber(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class RangeChecker {
 public:
  explicit RangeChecker(std::vector<ConfigError>& errors) : m_errors(errors) {}

  void field(const char* key, bool&, const FieldSpec&) { (void)key; }
  /// Choice keys were checked against their table when read.
  template <class E, std::enable_if_t<IsChoice<E>::value, int> = 0>
  void field(const char*, E&, const FieldSpec&) {}

  void field(const char* key, int& value, const FieldSpec& spec) {
    checkNumber(joinPath(m_prefix, key), value, spec);
  }
  void field(const char* key, double& value, const FieldSpec& spec) {
    const std::string path = joinPath(m_prefix, key);
    if (!std::isfinite(value)) {
      m_errors.push_back({path, "must be a finite number, got " + formatNumber(value)});
      return;
    }
    checkNumber(path, value, spec);
  }
  void field(const char* key, std::string& value, const FieldSpec& spec) {
    checkChoice(joinPath(m_prefix, key), value, spec);
  }
  void field(const char* key, std::vector<int>& values, const FieldSpec& spec) {
    const std::string path = joinPath(m_prefix, key);
    checkLength(path, values.size(), spec);
    for (std::size_t i = 0; i < values.size(); ++i) {
      checkNumber(path + "[" + std::to_string(i) + "]", values[i], spec);
    }
  }
  void field(const char* key, std::vector<double>& values, const FieldSpec& spec) {
    const std::string path = joinPath(m_prefix, key);
    checkLength(path, values.size(), spec);
    for (std::size_t i = 0; i < values.size(); ++i) {
      checkNumber(path + "[" + std::to_string(i) + "]", values[i], spec);
    }
  }
  void field(const char* key, std::vector<std::string>& values, const FieldSpec& spec) {
    const std::string path = joinPath(m_prefix, key);
    checkLength(path, values.size(), spec);
    for (std::size_t i = 0; i < values.size(); ++i) {
      checkChoice(path + "[" + std::to_string(i) + "]", values[i], spec);
    }
  }
  void field(const char* key, std::vector<LayerSpec>& layers, const FieldSpec&) {
    const std::string path = joinPath(m_prefix, key);
    const auto& vocab = magvitLayerVocabulary();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      const LayerSpec& l = layers[i];
      if (std::find(vocab.begin(), vocab.end(), l.name) == vocab.end()) {
        std::string message = "unknown layer \"" + l.name + "\"";
        if (auto guess = closestMatch(l.name, vocab))
          message += " (did you mean \"" + *guess + "\"?)";
        m_errors.push_back({at, message});
      } else if (l.arg && !layerAcceptsArgument(l.name)) {
        m_errors.push_back(
            {at, "layer \"" + l.name + "\" takes no argument, got " + std::to_string(*l.arg)});
      } else if (!l.arg && layerRequiresArgument(l.name)) {
        m_errors.push_back({at, "layer \"" + l.name + "\" needs a count: [\"" + l.name + "\", n]"});
      } else if (l.arg && *l.arg < 1) {
        m_errors.push_back(
            {at, "argument of \"" + l.name + "\" must be >= 1, got " + std::to_string(*l.arg)});
      }
    }
  }

  template <class S>
  void section(const char* key, S& sec) {
    const std::string saved = m_prefix;
    m_prefix = joinPath(m_prefix, key);
    sec.describe(*this);
    m_prefix = saved;
  }

 private:
  void checkNumber(const std::string& path, double value, const FieldSpec& spec) {
    if (spec.minValue() && value < *spec.minValue()) {
      m_errors.push_back(
          {path, "must be >= " + formatNumber(*spec.minValue()) + ", got " + formatNumber(value)});
    } else if (spec.aboveValue() && value <= *spec.aboveValue()) {
      m_errors.push_back(
          {path, "must be > " + formatNumber(*spec.aboveValue()) + ", got " + formatNumber(value)});
    } else if (spec.maxValue() && value > *spec.maxValue()) {
      m_errors.push_back(
          {path, "must be <= " + formatNumber(*spec.maxValue()) + ", got " + formatNumber(value)});
    }
  }
  void checkChoice(const std::string& path, const std::string& value, const FieldSpec& spec) {
    const auto& allowed = spec.allowed();
    if (allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end())
      return;
    m_errors.push_back({path, notOneOfMessage(allowed, value)});
  }
  void checkLength(const std::string& path, std::size_t n, const FieldSpec& spec) {
    if (spec.requiredLength() && n != static_cast<std::size_t>(*spec.requiredLength())) {
      m_errors.push_back({path, "must have " + std::to_string(*spec.requiredLength()) +
                                    " entries, got " + std::to_string(n)});
    }
  }

  std::vector<ConfigError>& m_errors;
  std::string m_prefix;
};

bool isPowerOfTwo(long long v) { return v > 0 && (v & (v - 1)) == 0; }

void checkMagvit(const RunConfig& c, std::vector<ConfigError>& errors) {
  const ModelConfig& m = c.model;
  if (m.max_dim < m.init_dim) {
    errors.push_back({"model.max_dim", "must be >= model.init_dim (" + std::to_string(m.init_dim) +
                                           "), got " + std::to_string(m.max_dim)});
  }
  const int space = countLayers(m.layers, "compress_space");
  const int time = countLayers(m.layers, "compress_time");
  const long long space_factor = 1LL << std::min(space, 30);
  if (c.data.image_size % space_factor != 0) {
    errors.push_back({"data.image_size", "must be divisible by " + std::to_string(space_factor) +
                                             " (" + std::to_string(space) +
                                             " compress_space layers), got " +
                                             std::to_string(c.data.image_size)});
  }
  if (c.data.train_crop > 0 && c.data.train_crop % space_factor != 0) {
    errors.push_back({"data.train_crop", "must be divisible by " + std::to_string(space_factor) +
                                             " (" + std::to_string(space) +
                                             " compress_space layers), got " +
                                             std::to_string(c.data.train_crop)});
  }
  const long long time_factor = 1LL << std::min(time, 30);
  for (const auto& [key, frames] :
       {std::pair<const char*, int>{"data.num_frames", c.data.num_frames},
        std::pair<const char*, int>{"data.train_frames", c.data.train_frames}}) {
    if (frames > 1 && (frames - 1) % time_factor != 0) {
      errors.push_back({key, "must be 1 + k * " + std::to_string(time_factor) + " (" +
                                 std::to_string(time) + " compress_time layers), got " +
                                 std::to_string(frames)});
    }
  }
  for (const char* key : {"input_conv_kernel", "output_conv_kernel"}) {
    const auto& k =
        std::string(key) == "input_conv_kernel" ? m.input_conv_kernel : m.output_conv_kernel;
    for (std::size_t i = 1; i < k.size(); ++i) {
      if (k[i] % 2 == 0) {
        errors.push_back({"model." + std::string(key) + "[" + std::to_string(i) + "]",
                          "spatial kernel sizes must be odd, got " + std::to_string(k[i])});
      }
    }
  }
  if (m.residual_conv_kernel % 2 == 0) {
    errors.push_back({"model.residual_conv_kernel",
                      "must be odd, got " + std::to_string(m.residual_conv_kernel)});
  }
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].name.rfind("cond_", 0) == 0 && m.dim_cond == 0) {
      errors.push_back({"model.layers[" + std::to_string(i) + "]",
                        "layer \"" + m.layers[i].name + "\" needs model.dim_cond > 0"});
    }
  }
}

void checkVqgan(const RunConfig& c, std::vector<ConfigError>& errors) {
  const auto& v = c.model.vqgan;
  if (v.channel_mult.empty()) {
    errors.push_back({"model.vqgan.channel_mult", "must have at least one entry"});
    return;
  }
  const long long factor = 1LL << std::min<std::size_t>(v.channel_mult.size() - 1, 30);
  if (c.data.image_size % factor != 0) {
    errors.push_back({"data.image_size", "must be divisible by " + std::to_string(factor) + " (" +
                                             std::to_string(v.channel_mult.size()) +
                                             " VQGAN levels), got " +
                                             std::to_string(c.data.image_size)});
  }
  if (c.model.quantizer.type == QuantizerType::Lfq && v.z_channels < 1) {
    errors.push_back({"model.vqgan.z_channels", "must be >= 1"});
  }
}

void checkQuantizer(const QuantizerConfig& q, std::vector<ConfigError>& errors) {
  if (q.type == QuantizerType::Lfq && !isPowerOfTwo(q.codebook_size)) {
    errors.push_back({"model.quantizer.codebook_size",
                      "must be a power of two for lfq, got " + std::to_string(q.codebook_size)});
  }
  if (q.type == QuantizerType::Fsq) {
    long long product = 1;
    for (int l : q.fsq_levels) product *= std::max(l, 1);
    if (q.fsq_levels.empty()) {
      errors.push_back({"model.quantizer.fsq_levels", "must have at least one entry for fsq"});
    } else if (product != q.codebook_size) {
      errors.push_back({"model.quantizer.codebook_size",
                        "must equal the product of fsq_levels (" + std::to_string(product) +
                            ") for fsq, got " + std::to_string(q.codebook_size)});
    }
  }
}

}  // namespace

std::string notOneOfMessage(const std::vector<std::string>& allowed, const std::string& value) {
  std::string message = "must be one of";
  for (std::size_t i = 0; i < allowed.size(); ++i)
    message += (i ? ", \"" : " \"") + allowed[i] + "\"";
  message += ", got \"" + value + "\"";
  if (auto guess = closestMatch(value, allowed)) message += " (did you mean \"" + *guess + "\"?)";
  return message;
}

std::string irregularFileKind(const std::filesystem::path& path) {
  std::error_code ec;
  switch (std::filesystem::status(path, ec).type()) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a named pipe";
    case std::filesystem::file_type::socket:
      return "a socket";
    case std::filesystem::file_type::unknown:
      return "of an unknown file type";
    default:
      return "";  // regular, or not found / not reachable: reported by whoever opens it
  }
}

std::vector<ConfigError> validate(const RunConfig& config) {
  std::vector<ConfigError> errors;
  RunConfig copy = config;
  RangeChecker checker(errors);
  copy.describe(checker);

  const auto& d = config.data;
  if (d.type != DataType::Synthetic && d.path.empty()) {
    errors.push_back(
        {"data.path", std::string("required when data.type is \"") + choiceName(d.type) + "\""});
  }
  if (d.type == DataType::Synthetic && !d.valid_path.empty()) {
    errors.push_back(
        {"data.valid_path",
         "procedural data has no folder: leave it empty when data.type is \"synthetic\""});
  }
  if (d.type == DataType::Images && d.num_frames != 1) {
    errors.push_back({"data.num_frames", "must be 1 when data.type is \"images\", got " +
                                             std::to_string(d.num_frames)});
  }
  if (d.train_crop > d.image_size) {
    errors.push_back({"data.train_crop", "must be at most data.image_size (" +
                                             std::to_string(d.image_size) + "), got " +
                                             std::to_string(d.train_crop)});
  }
  if (d.train_frames > d.num_frames) {
    errors.push_back({"data.train_frames", "must be at most data.num_frames (" +
                                               std::to_string(d.num_frames) + "), got " +
                                               std::to_string(d.train_frames)});
  }
  if (config.model.kind == ModelKind::Magvit2) {
    checkMagvit(config, errors);
  } else if (config.model.kind == ModelKind::Vqgan) {
    checkVqgan(config, errors);
  }
  checkQuantizer(config.model.quantizer, errors);

  const auto& t = config.train;
  // AdamW's decoupled decay multiplies each weight by 1 - lr x weight_decay every step: at 1 and
  // above it zeroes or flips the weights (and the steps turn non-finite, blamed on the rate).
  if (t.weight_decay > 0 && t.lr * t.weight_decay >= 1) {
    std::ostringstream limit;
    limit << 1 / t.lr;
    errors.push_back({"train.weight_decay",
                      "must be below 1 / train.lr (" + limit.str() +
                          "): AdamW multiplies the weights by 1 - lr x weight_decay every step"});
  }
  for (const auto& name : t.activation_checkpointing) {
    const auto& vocab = magvitLayerVocabulary();
    if (name != "all" && std::find(vocab.begin(), vocab.end(), name) == vocab.end()) {
      std::string message =
          "unknown layer type \"" + name + "\" (a MAGVIT-v2 layer name or \"all\")";
      if (auto guess = closestMatch(name, vocab)) message += " (did you mean \"" + *guess + "\"?)";
      errors.push_back({"train.activation_checkpointing", message});
    }
  }

  const auto& zero3_vocab = zero3UnitVocabulary();
  for (const auto& name : config.distributed.zero3_units) {
    if (std::find(zero3_vocab.begin(), zero3_vocab.end(), name) == zero3_vocab.end()) {
      std::string message =
          "unknown layer type \"" + name +
          "\" (a MAGVIT-v2 layer name, \"discr_block\", \"discr_attention\" or \"all\")";
      if (auto guess = closestMatch(name, zero3_vocab))
        message += " (did you mean \"" + *guess + "\"?)";
      errors.push_back({"distributed.zero3_units", message});
    }
  }

  if (!parseDeviceSpec(t.device)) {
    errors.push_back({"train.device", "must be \"auto\", \"cpu\", \"cuda\" or \"cuda:N\", got \"" +
                                          t.device + "\""});
  }
  if (t.precision == Precision::Fp16 && t.device == "cpu") {
    errors.push_back(
        {"train.precision",
         "\"fp16\" needs a CUDA device (train.device is \"cpu\"): use \"bf16\" or \"fp32\""});
  }
  // Missing weight files are the trainer's to report (a configuration may be written for another
  // machine), but one that is there and cannot be read whole is wrong wherever it is used.
  const auto checkWeightFile = [&errors](const char* key, const std::string& path) {
    const std::string kind = path.empty() ? std::string() : irregularFileKind(path);
    if (!kind.empty()) errors.push_back({key, path + " is " + kind + ", not a weight file"});
  };
  checkWeightFile("loss.lpips_backbone", config.loss.lpips_backbone);
  checkWeightFile("loss.lpips_lin", config.loss.lpips_lin);
  checkWeightFile("eval.fid_weights", config.eval.fid_weights);
  checkWeightFile("eval.fvd_weights", config.eval.fvd_weights);
  const auto& ev = config.eval;
  if (ev.every_steps > 0 && ev.fid_weights.empty() && ev.fvd_weights.empty()) {
    errors.push_back({"eval.every_steps", "needs eval.fid_weights or eval.fvd_weights (or 0)"});
  }
  if (!ev.fvd_weights.empty() && d.num_frames < 9) {
    errors.push_back({"eval.fvd_weights",
                      "rFVD's I3D needs clips of at least 9 frames, "
                      "data.num_frames is " +
                          std::to_string(d.num_frames)});
  }

  const auto& dist = config.distributed;
  if (dist.backend == Backend::Nccl && t.device == "cpu") {
    errors.push_back({"distributed.backend",
                      "\"nccl\" needs CUDA tensors but train.device is \"cpu\": use \"gloo\""});
  }
  const long long world = static_cast<long long>(dist.nproc_per_node) * dist.nnodes;
  if (world > 1 && dist.strategy == Strategy::None) {
    errors.push_back({"distributed.strategy",
                      "must be \"ddp\", \"zero1\", \"zero2\" or \"zero3\" with " +
                          std::to_string(world) + " processes (nproc_per_node x nnodes)"});
  }
  if (dist.node_rank >= dist.nnodes) {
    errors.push_back({"distributed.node_rank", "must be < distributed.nnodes (" +
                                                   std::to_string(dist.nnodes) + "), got " +
                                                   std::to_string(dist.node_rank)});
  }
  return errors;
}

}  // namespace tb::core
