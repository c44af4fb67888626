#include "trainer/weights/magvit2_kwargs.h"

#include "core/config_io.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tb::trainer::weights {
namespace {

using Json = nlohmann::json;

// The reference's defaults (VideoTokenizer.__init__ at a00519f) where they differ from
// Tokenbench's, and the settings the reference has no argument for.
core::RunConfig referenceDefaults() {
  core::RunConfig c;
  auto& m = c.model;
  m.kind = core::ModelKind::Magvit2;
  m.pixel_range = core::PixelRange::ZeroOne;
  m.channels = 3;
  m.init_dim = 64;
  m.max_dim = 0;  // float('inf') unless given: resolved from the layer list
  m.layers = {{"residual", {}}, {"residual", {}}, {"residual", {}}};
  m.input_conv_kernel = {7, 7, 7};
  m.output_conv_kernel = {3, 3, 3};
  m.residual_conv_kernel = 3;
  m.separate_first_frame_encoding = false;
  m.time_padding = core::TimePadding::Zeros;
  m.time_alignment = core::TimeAlignment::Lagged;
  // VideoTokenizer.encode() zips its encoder layers with one flag per layer of the list, so the
  // LayerNorm appended after them is never applied (its weights are still in the state dict).
  m.encoder_norm = false;
  m.attn_dim_head = 32;
  m.attn_heads = 8;
  m.attn_num_mem_kv = 4;  // Attention(num_memory_kv = 4), not a VideoTokenizer argument
  m.linear_attn_dim_head = 8;
  m.linear_attn_heads = 16;
  m.ff_mult = 4;  // FeedForward(dim) everywhere
  m.dim_cond = 0;
  auto& q = m.quantizer;
  q.type = core::QuantizerType::Lfq;
  q.num_codebooks = 1;
  q.entropy_loss_weight = 0.1;
  q.commitment_loss_weight = 1.0;
  q.diversity_gamma = 2.5;
  q.soft_clamp = 10.0;
  q.spherical = false;
  c.loss.quantizer_weight = 1.0;
  return c;
}

// Settings of the reference's own losses, GAN and attention kernels (dropout, flash): read,
// not carried over.
const std::set<std::string>& trainerArguments() {
  static const std::set<std::string> names = {"vgg",
                                              "vgg_weights",
                                              "perceptual_loss_weight",
                                              "use_gan",
                                              "adversarial_loss_weight",
                                              "grad_penalty_loss_weight",
                                              "multiscale_discrs",
                                              "multiscale_adversarial_loss_weight",
                                              "flash_attn",
                                              "attn_dropout"};
  return names;
}

bool isCondAttention(const std::string& layer) {
  return layer == "cond_attend_space" || layer == "cond_linear_attend_space" ||
         layer == "cond_attend_time";
}

// Reads typed values, recording an error (and returning false) when the type is wrong.
class ArgumentReader {
 public:
  explicit ArgumentReader(std::vector<std::string>& errors) : m_errors(errors) {}

  bool integer(const std::string& key, const Json& v, int& out) {
    if (v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                  v.get<double>() == std::floor(v.get<double>()))) {
      out = static_cast<int>(v.get<double>());
      return true;
    }
    return error(key, "expected an integer, got " + v.dump());
  }
  bool real(const std::string& key, const Json& v, double& out) {
    if (!v.is_number()) return error(key, "expected a number, got " + v.dump());
    out = v.get<double>();
    return true;
  }
  bool boolean(const std::string& key, const Json& v, bool& out) {
    if (!v.is_boolean()) return error(key, "expected true or false, got " + v.dump());
    out = v.get<bool>();
    return true;
  }
  // An integer k or a list [t, h, w].
  bool triple(const std::string& key, const Json& v, std::vector<int>& out) {
    int k = 0;
    if (v.is_number()) {
      if (!integer(key, v, k)) return false;
      out = {k, k, k};
      return true;
    }
    if (!v.is_array() || v.size() != 3) return error(key, "expected [t, h, w], got " + v.dump());
    out.clear();
    for (const auto& e : v) {
      if (!integer(key, e, k)) return false;
      out.push_back(k);
    }
    return true;
  }
  bool error(const std::string& key, const std::string& message) {
    m_errors.push_back(key + ": " + message);
    return false;
  }

 private:
  std::vector<std::string>& m_errors;
};

std::vector<core::LayerSpec> readLayers(const Json& v, ArgumentReader& read) {
  std::vector<core::LayerSpec> layers;
  if (!v.is_array()) {
    read.error("layers", "expected a list, got " + v.dump());
    return layers;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string key = "layers[" + std::to_string(i) + "]";
    const Json& e = v[i];
    if (e.is_string()) {
      layers.push_back({e.get<std::string>(), {}});
    } else if (e.is_array() && e.size() == 2 && e[0].is_string()) {
      int arg = 0;
      if (read.integer(key, e[1], arg)) layers.push_back({e[0].get<std::string>(), arg});
    } else {
      read.error(key, "expected a layer name or [name, integer], got " + e.dump());
    }
  }
  return layers;
}

// Channels after each layer (compress_* double them up to max_dim unless given).
struct ChannelChain {
  int largest = 0;  ///< widest channel count before capping
  int latent = 0;   ///< channels after the last layer, capped at max_dim
};

ChannelChain channelChain(const core::ModelConfig& m) {
  ChannelChain chain{m.init_dim, m.init_dim};
  int dim = m.init_dim;
  for (const auto& layer : m.layers) {
    if (layer.name != "compress_space" && layer.name != "compress_time") continue;
    const int wanted = layer.arg.value_or(dim * 2);
    chain.largest = std::max(chain.largest, wanted);
    dim = m.max_dim > 0 ? std::min(wanted, m.max_dim) : wanted;
  }
  chain.latent = dim;
  return chain;
}

int timeFactor(const core::ModelConfig& m) {
  int factor = 1;
  for (const auto& layer : m.layers)
    if (layer.name == "compress_time") factor *= 2;
  return factor;
}

// Input sides of the frame discriminator's blocks: image_size, /2, ..., log2(image_size) - 1 of
// them (the reference puts attention after each).
std::vector<int> discriminatorSides(int image_size) {
  std::vector<int> sides;
  int blocks = 0;
  while ((2 << (blocks + 1)) <= image_size) ++blocks;  // log2(image_size) - 1
  for (int i = 0, side = image_size; i < blocks; ++i, side /= 2) sides.push_back(side);
  return sides;
}

KwargsImport importArguments(const Json& kw) {
  KwargsImport out;
  out.config = referenceDefaults();
  auto& errors = out.errors;
  ArgumentReader read(errors);
  if (!kw.is_object()) {
    errors.push_back("expected a JSON object of VideoTokenizer keyword arguments, got " +
                     std::string(kw.type_name()));
    return out;
  }
  auto& c = out.config;
  auto& m = c.model;
  auto& q = m.quantizer;
  bool use_fsq = false, has_image_size = false, max_dim_given = false;
  std::optional<int> codebook_size;
  std::optional<std::vector<int>> fsq_levels;
  std::optional<Json> discr_kwargs;
  std::vector<std::string> ignored;

  using Handler = std::function<void(const std::string&, const Json&)>;
  const std::map<std::string, Handler> handlers = {
      {"image_size",
       [&](const std::string& k, const Json& v) {
         has_image_size = read.integer(k, v, c.data.image_size);
       }},
      {"layers", [&](const std::string&, const Json& v) { m.layers = readLayers(v, read); }},
      {"residual_conv_kernel_size",
       [&](const std::string& k, const Json& v) {
         std::vector<int> t;
         if (!read.triple(k, v, t)) return;
         if (t[0] != t[1] || t[1] != t[2])
           read.error(k,
                      "Tokenbench's residual units take one kernel size for time and space, "
                      "got " +
                          v.dump());
         m.residual_conv_kernel = t[0];
       }},
      {"num_codebooks",
       [&](const std::string& k, const Json& v) { read.integer(k, v, q.num_codebooks); }},
      {"codebook_size",
       [&](const std::string& k, const Json& v) {
         int n = 0;
         if (!v.is_null() && read.integer(k, v, n)) codebook_size = n;
       }},
      {"channels", [&](const std::string& k, const Json& v) { read.integer(k, v, m.channels); }},
      {"init_dim", [&](const std::string& k, const Json& v) { read.integer(k, v, m.init_dim); }},
      {"max_dim",
       [&](const std::string& k, const Json& v) {
         // float('inf') (the default) pickles as a float; JSON may spell it null.
         if (v.is_null() || (v.is_number_float() && std::isinf(v.get<double>()))) return;
         max_dim_given = read.integer(k, v, m.max_dim);
       }},
      {"dim_cond",
       [&](const std::string& k, const Json& v) {
         if (!v.is_null()) read.integer(k, v, m.dim_cond);
       }},
      {"dim_cond_expansion_factor",
       [&](const std::string& k, const Json& v) {
         double f = 4;
         if (read.real(k, v, f) && f != 4.0)
           read.error(k,
                      "Tokenbench's conditioning stem expands dim_cond 4 times, got " + v.dump());
       }},
      {"input_conv_kernel_size",
       [&](const std::string& k, const Json& v) { read.triple(k, v, m.input_conv_kernel); }},
      {"output_conv_kernel_size",
       [&](const std::string& k, const Json& v) { read.triple(k, v, m.output_conv_kernel); }},
      {"pad_mode",
       [&](const std::string& k, const Json& v) {
         if (!v.is_string() || v.get<std::string>() != "constant")
           read.error(k,
                      "only \"constant\" (zero frames before the first) has a Tokenbench "
                      "equivalent, got " +
                          v.dump());
       }},
      {"lfq_entropy_loss_weight",
       [&](const std::string& k, const Json& v) { read.real(k, v, q.entropy_loss_weight); }},
      {"lfq_commitment_loss_weight",
       [&](const std::string& k, const Json& v) { read.real(k, v, q.commitment_loss_weight); }},
      {"lfq_diversity_gamma",
       [&](const std::string& k, const Json& v) { read.real(k, v, q.diversity_gamma); }},
      {"lfq_spherical",
       [&](const std::string& k, const Json& v) { read.boolean(k, v, q.spherical); }},
      {"quantizer_aux_loss_weight",
       [&](const std::string& k, const Json& v) { read.real(k, v, c.loss.quantizer_weight); }},
      {"lfq_soft_clamp_input_value",
       [&](const std::string& k, const Json& v) {
         if (v.is_null())
           q.soft_clamp = 0;
         else
           read.real(k, v, q.soft_clamp);
       }},
      {"lfq_activation",
       [&](const std::string& k, const Json& v) {
         const bool identity =
             v.is_null() ||
             (v.is_object() && v.value("__object__", "") == "torch.nn.modules.linear.Identity");
         if (!identity)
           read.error(
               k, "only nn.Identity (the default) has a Tokenbench equivalent, got " + v.dump());
       }},
      {"use_fsq", [&](const std::string& k, const Json& v) { read.boolean(k, v, use_fsq); }},
      {"fsq_levels",
       [&](const std::string& k, const Json& v) {
         if (v.is_null()) return;
         if (!v.is_array()) {
           read.error(k, "expected a list of integers, got " + v.dump());
           return;
         }
         std::vector<int> levels;
         for (const auto& e : v) {
           int level = 0;
           if (!read.integer(k, e, level)) return;
           levels.push_back(level);
         }
         fsq_levels = levels;
       }},
      {"attn_dim_head",
       [&](const std::string& k, const Json& v) { read.integer(k, v, m.attn_dim_head); }},
      {"attn_heads",
       [&](const std::string& k, const Json& v) { read.integer(k, v, m.attn_heads); }},
      {"linear_attn_dim_head",
       [&](const std::string& k, const Json& v) { read.integer(k, v, m.linear_attn_dim_head); }},
      {"linear_attn_heads",
       [&](const std::string& k, const Json& v) { read.integer(k, v, m.linear_attn_heads); }},
      {"separate_first_frame_encoding",
       [&](const std::string& k, const Json& v) {
         read.boolean(k, v, m.separate_first_frame_encoding);
       }},
      {"discr_kwargs",
       [&](const std::string& k, const Json& v) {
         if (v.is_null()) return;
         if (!v.is_object()) read.error(k, "expected a dict, got " + v.dump());
         discr_kwargs = v;
       }},
  };

  for (const auto& [key, value] : kw.items()) {
    if (const auto it = handlers.find(key); it != handlers.end()) {
      it->second(key, value);
    } else if (trainerArguments().count(key)) {
      ignored.push_back(key);
    } else {
      errors.push_back(key + ": not a keyword argument of magvit2-pytorch's VideoTokenizer");
    }
  }
  if (!has_image_size) errors.push_back("image_size: required");

  if (use_fsq) {
    if (codebook_size)
      errors.push_back("codebook_size: must be unset with use_fsq (the FSQ levels fix it)");
    if (!fsq_levels) {
      errors.push_back("fsq_levels: required with use_fsq");
    } else {
      q.type = core::QuantizerType::Fsq;
      q.fsq_levels = *fsq_levels;
      q.codebook_size = 1;
      for (int level : *fsq_levels) q.codebook_size *= level;
      q.commitment_loss_weight = 0;  // vector-quantize-pytorch's FSQ has no loss
    }
  } else {
    if (fsq_levels) errors.push_back("fsq_levels: only used with use_fsq");
    if (!codebook_size)
      errors.push_back("codebook_size: required (lookup-free quantization, use_fsq false)");
    else
      q.codebook_size = *codebook_size;
  }

  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const std::string& name = m.layers[i].name;
    const std::string key = "layers[" + std::to_string(i) + "]";
    if (isCondAttention(name))
      errors.push_back(key + ": " + name +
                       ": the reference builds its norms for dim_cond-wide conditioning, "
                       "Tokenbench for dim_cond x 4 (the expanded stem output): the weights "
                       "differ in shape");
    if (name == "attend_time" && m.dim_cond > 0)
      errors.push_back(key +
                       ": attend_time with dim_cond: the reference conditions this "
                       "layer's feed-forward, Tokenbench does not");
  }

  const ChannelChain chain = channelChain(m);
  if (!max_dim_given) m.max_dim = std::max(chain.largest, m.init_dim);
  m.discriminator.type = core::DiscriminatorType::Frame;
  m.discriminator.dim = channelChain(m).latent;  // Discriminator(dim = the latent channels)
  m.discriminator.max_dim = 512;
  if (discr_kwargs && discr_kwargs->is_object()) {
    if (auto it = discr_kwargs->find("dim"); it != discr_kwargs->end())
      read.integer("discr_kwargs.dim", *it, m.discriminator.dim);
    if (auto it = discr_kwargs->find("max_dim"); it != discr_kwargs->end())
      read.integer("discr_kwargs.max_dim", *it, m.discriminator.max_dim);
  }
  m.discriminator.attn_resolutions = discriminatorSides(c.data.image_size);
  if (m.discriminator.attn_resolutions.empty()) m.discriminator.attn_resolutions = {1};
  const int tf = timeFactor(m);
  c.data.num_frames = 16 % tf == 0 ? 17 : 1 + tf;

  if (!ignored.empty()) {
    std::string list;
    for (const auto& k : ignored) list += (list.empty() ? "" : ", ") + k;
    out.notes.push_back(list +
                        ": settings of magvit2-pytorch's own losses, GAN and attention kernels, "
                        "not carried over (the loss section keeps Tokenbench's defaults)");
  }
  if (errors.empty()) {
    for (const auto& e : core::validate(c))
      errors.push_back("the Tokenbench configuration made from these arguments: " + e.toString());
  }
  return out;
}

}  // namespace

KwargsImport importVideoTokenizerKwargs(const Json& document) {
  // {"VideoTokenizer": {...}, "frames": n, ...}: the arguments with the clip length they were
  // used with (the layout of Tokenbench's magvit2-pytorch test fixture).
  if (document.is_object() && document.contains("VideoTokenizer")) {
    KwargsImport out = importVideoTokenizerKwargs(document["VideoTokenizer"]);
    for (const auto& [key, value] : document.items()) {
      if (key == "VideoTokenizer") continue;
      if (key == "frames" && value.is_number_integer()) {
        out.notes.pop_back();  // the clip length is given
        out.config.data.num_frames = value.get<int>();
        for (const auto& e : core::validate(out.config))
          if (e.path == "data.num_frames") out.errors.push_back("frames: " + e.message);
      } else {
        out.notes.push_back(key + ": not a VideoTokenizer argument, ignored");
      }
    }
    return out;
  }
  KwargsImport out = importArguments(document);
  // VideoTokenizer has no frame count: say what the one in the configuration is for.
  out.notes.push_back("data.num_frames " + std::to_string(out.config.data.num_frames) +
                      " is only the clip length training and compare use; tokenize codes each "
                      "video whole (1 + k x " +
                      std::to_string(timeFactor(out.config.model)) + " frames)");
  return out;
}

Json kwargsFromPickle(const PickleValue& v) {
  using Kind = PickleValue::Kind;
  switch (v.kind) {
    case Kind::None:
      return nullptr;
    case Kind::Bool:
      return v.boolean;
    case Kind::Int:
      return v.integer;
    case Kind::Float:
      return v.real;
    case Kind::String:
    case Kind::Bytes:
      return v.text;
    case Kind::Tuple:
    case Kind::List:
    case Kind::Set: {
      Json a = Json::array();
      for (const auto& item : v.items) a.push_back(kwargsFromPickle(*item));
      return a;
    }
    case Kind::Dict: {
      Json o = Json::object();
      for (const auto& [key, value] : v.entries) {
        if (key->kind != Kind::String)
          throw PickleError("configuration key that is a " + key->describe());
        o[key->text] = kwargsFromPickle(*value);
      }
      return o;
    }
    case Kind::Object:
      return Json{{"__object__", v.text}};
    case Kind::Global:
      return Json{{"__global__", v.text}};
    case Kind::Tensor:
    case Kind::Storage:
      return Json{{"__tensor__", v.tensor.sizes().vec()}};
  }
  return nullptr;
}

KwargsExport exportVideoTokenizerKwargs(const core::RunConfig& c) {
  KwargsExport out;
  const auto& m = c.model;
  const auto& q = m.quantizer;
  auto refuse = [&](const std::string& key, const std::string& why) {
    out.errors.push_back(key + ": " + why);
  };
  if (m.kind != core::ModelKind::Magvit2)
    refuse("model.kind", std::string("\"") + core::choiceName(m.kind) +
                             "\": magvit2-pytorch's VideoTokenizer is a MAGVIT-v2 tokenizer");
  if (m.time_padding != core::TimePadding::Zeros)
    refuse("model.time_padding", std::string("\"") + core::choiceName(m.time_padding) +
                                     "\": the reference pads causal convolutions with zero frames");
  if (m.time_alignment != core::TimeAlignment::Lagged)
    refuse("model.time_alignment",
           std::string("\"") + core::choiceName(m.time_alignment) +
               "\": the reference's time compression pads two frames in front (lagged)");
  if (m.kind == core::ModelKind::Magvit2 && m.encoder_norm)
    refuse("model.encoder_norm",
           "true: VideoTokenizer.encode() never applies its encoder LayerNorm, so these weights "
           "would tokenize differently there (train with model.encoder_norm false to export)");
  if (m.attn_num_mem_kv != 4)
    refuse("model.attn_num_mem_kv", std::to_string(m.attn_num_mem_kv) +
                                        ": the reference's attention has 4 memory key/values");
  if (m.ff_mult != 4)
    refuse("model.ff_mult",
           std::to_string(m.ff_mult) + ": the reference's feed-forward width is 4x");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const std::string key = "model.layers[" + std::to_string(i) + "]";
    if (isCondAttention(m.layers[i].name))
      refuse(key, m.layers[i].name +
                      ": the reference builds this layer for dim_cond-wide conditioning, "
                      "Tokenbench for dim_cond x 4");
    if (m.layers[i].name == "attend_time" && m.dim_cond > 0)
      refuse(key, "attend_time with model.dim_cond > 0: the reference conditions its feed-forward");
  }
  if (q.type != core::QuantizerType::Lfq && q.type != core::QuantizerType::Fsq)
    refuse("model.quantizer.type", std::string("\"") + core::choiceName(q.type) +
                                       "\": the reference quantizes with LFQ or FSQ");
  if (q.type == core::QuantizerType::Fsq && q.commitment_loss_weight > 0)
    refuse("model.quantizer.commitment_loss_weight",
           "the reference's FSQ has no commitment loss (set it to 0)");

  using OrderedJson = nlohmann::ordered_json;
  auto& kw = out.kwargs;
  kw["image_size"] = c.data.image_size;
  kw["channels"] = m.channels;
  kw["init_dim"] = m.init_dim;
  kw["max_dim"] = m.max_dim;
  OrderedJson layers = OrderedJson::array();
  for (const auto& layer : m.layers) {
    if (layer.arg)
      layers.push_back(OrderedJson::array({layer.name, *layer.arg}));
    else
      layers.push_back(layer.name);
  }
  kw["layers"] = layers;
  kw["residual_conv_kernel_size"] = m.residual_conv_kernel;
  kw["input_conv_kernel_size"] = m.input_conv_kernel;
  kw["output_conv_kernel_size"] = m.output_conv_kernel;
  kw["separate_first_frame_encoding"] = m.separate_first_frame_encoding;
  if (m.dim_cond > 0) kw["dim_cond"] = m.dim_cond;
  kw["attn_dim_head"] = m.attn_dim_head;
  kw["attn_heads"] = m.attn_heads;
  kw["linear_attn_dim_head"] = m.linear_attn_dim_head;
  kw["linear_attn_heads"] = m.linear_attn_heads;
  kw["num_codebooks"] = q.num_codebooks;
  if (q.type == core::QuantizerType::Fsq) {
    kw["use_fsq"] = true;
    kw["fsq_levels"] = q.fsq_levels;
  } else {
    kw["codebook_size"] = q.codebook_size;
    kw["lfq_entropy_loss_weight"] = q.entropy_loss_weight;
    kw["lfq_commitment_loss_weight"] = q.commitment_loss_weight;
    kw["lfq_diversity_gamma"] = q.diversity_gamma;
    kw["lfq_spherical"] = q.spherical;
    kw["lfq_soft_clamp_input_value"] =
        q.soft_clamp > 0 ? OrderedJson(q.soft_clamp) : OrderedJson(nullptr);
  }
  kw["quantizer_aux_loss_weight"] = c.loss.quantizer_weight;
  const auto& d = m.discriminator;
  const int discr_dim = d.dim > 0 ? d.dim : m.init_dim;
  if (d.type == core::DiscriminatorType::Frame &&
      (discr_dim != channelChain(m).latent || d.max_dim != 512 || m.linear_attn_dim_head != 8 ||
       m.linear_attn_heads != 16)) {
    kw["discr_kwargs"] = {{"dim", discr_dim},
                          {"image_size", c.data.image_size},
                          {"channels", m.channels},
                          {"max_dim", d.max_dim},
                          {"linear_attn_dim_head", m.linear_attn_dim_head},
                          {"linear_attn_heads", m.linear_attn_heads}};
  }
  return out;
}

}  // namespace tb::trainer::weights
