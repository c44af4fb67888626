#include "trainer/weights/public_vq.h"

#include <optional>
#include <stdexcept>

namespace tb::trainer::weights {
namespace {

using Json = nlohmann::json;

/// Reads fields of one JSON object, each error naming the source and the field's dotted path.
class Fields {
 public:
  Fields(const Json& object, std::string source, std::string path)
      : m_object(object), m_source(std::move(source)), m_path(std::move(path)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(m_source + ": " + name(key) + ": " + what);
  }
  std::string name(const std::string& key) const {
    return m_path.empty() ? key : m_path + "." + key;
  }
  const Json* find(const std::string& key) const {
    const auto it = m_object.find(key);
    return it == m_object.end() || it->is_null() ? nullptr : &*it;
  }
  Fields object(const std::string& key) const {
    const Json* v = find(key);
    if (!v) fail(key, "missing");
    if (!v->is_object()) fail(key, "must be a mapping, got " + v->dump());
    return Fields(*v, m_source, name(key));
  }
  int integer(const std::string& key, std::optional<int> fallback = std::nullopt) const {
    const Json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      fail(key, "missing");
    }
    if (!v->is_number_integer() || v->get<long long>() < 0 || v->get<long long>() > (1 << 30))
      fail(key, "must be a whole number >= 0, got " + v->dump());
    return v->get<int>();
  }
  double number(const std::string& key, double fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number()) fail(key, "must be a number, got " + v->dump());
    return v->get<double>();
  }
  bool boolean(const std::string& key, bool fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(key, "must be true or false, got " + v->dump());
    return v->get<bool>();
  }
  std::vector<int> integers(const std::string& key,
                            std::optional<std::vector<int>> fallback = std::nullopt) const {
    const Json* v = find(key);
    if (!v) {
      if (fallback) return *fallback;
      fail(key, "missing");
    }
    if (!v->is_array()) fail(key, "must be a list of whole numbers, got " + v->dump());
    std::vector<int> out;
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<long long>() < 1 || e.get<long long>() > (1 << 20))
        fail(key, "must be a list of whole numbers >= 1, got " + v->dump());
      out.push_back(e.get<int>());
    }
    return out;
  }
  std::string text(const std::string& key) const {
    const Json* v = find(key);
    return v && v->is_string() ? v->get<std::string>() : std::string();
  }
  bool has(const std::string& key) const { return find(key) != nullptr; }

 private:
  const Json& m_object;
  std::string m_source, m_path;
};

/// What both formats share: a VQGAN with a plain codebook, [-1, 1] pixels, no code restarts.
core::RunConfig vqganBase() {
  core::RunConfig c;
  c.model.kind = core::ModelKind::Vqgan;
  c.model.channels = 3;
  c.model.pixel_range = core::PixelRange::MinusOneOne;
  c.model.quantizer.type = core::QuantizerType::Vq;
  c.model.quantizer.vq_ema = false;
  c.model.quantizer.vq_dead_code_threshold = 0;  // neither project restarts codes
  c.model.quantizer.num_codebooks = 1;
  return c;
}

std::int64_t countPrefix(const std::map<std::string, torch::Tensor>& state,
                         const std::string& prefix) {
  std::int64_t blocks = 0;
  while (state.count(prefix + std::to_string(blocks) + ".conv1.weight")) ++blocks;
  return blocks;
}

/// LlamaGen's ch and num_res_blocks as the weights show them (ModelArgs has no field for them).
void llamagenWidths(const std::map<std::string, torch::Tensor>& state, int& ch, int& blocks) {
  const auto conv_in = state.find("encoder.conv_in.weight");
  if (conv_in != state.end() && conv_in->second.dim() == 4)
    ch = static_cast<int>(conv_in->second.size(0));
  if (const auto n = countPrefix(state, "encoder.conv_blocks.0.res."); n > 0)
    blocks = static_cast<int>(n);
}

/// Attention at the deepest level only, where LlamaGen puts it.
void deepestAttention(core::VqganConfig& v, int resolution) {
  v.resolution = resolution;
  v.attn_resolutions = {resolution >> (v.channel_mult.size() - 1)};
}

std::string replacePrefix(const std::string& name, const std::string& from, const std::string& to) {
  return name.rfind(from, 0) == 0 ? to + name.substr(from.size()) : name;
}

/// "down.3.block.1.conv1.weight" -> {"down", "3", "block.1.conv1.weight"}.
struct Path {
  std::string head, index, rest;
};
std::optional<Path> splitIndexed(const std::string& name) {
  const auto a = name.find('.');
  if (a == std::string::npos) return std::nullopt;
  const auto b = name.find('.', a + 1);
  if (b == std::string::npos) return std::nullopt;
  return Path{name.substr(0, a), name.substr(a + 1, b - a - 1), name.substr(b + 1)};
}

/// The reference name of one Tokenbench tensor inside the encoder or decoder (`side`, without
/// its prefix), for a model of `levels` resolution levels.
std::string sideName(PublicVqFormat format, bool decoder, const std::string& name,
                     std::size_t levels) {
  const bool taming = format == PublicVqFormat::Taming;
  for (const auto& [ours, taming_name, llamagen_name] :
       {std::tuple<const char*, const char*, const char*>{"mid_block_1.", "mid.block_1.", "mid.0."},
        {"mid_attn_1.", "mid.attn_1.", "mid.1."},
        {"mid_block_2.", "mid.block_2.", "mid.2."}}) {
    if (name.rfind(ours, 0) == 0)
      return replacePrefix(name, ours, taming ? taming_name : llamagen_name);
  }
  const auto path = splitIndexed(name);
  const char* list = decoder ? "up" : "down";
  if (!path || path->head != list) return name;  // conv_in, norm_out, conv_out
  std::string index = path->index;
  // Tokenbench (and LlamaGen) list decoder levels in execution order; taming by resolution.
  if (decoder && taming) index = std::to_string(levels - 1 - std::stoul(index));
  std::string rest = path->rest;
  const char* resample = decoder ? "upsample." : "downsample.";
  if (rest.rfind(resample, 0) == 0)
    rest = replacePrefix(rest, resample, resample + std::string("conv."));
  if (!taming) rest = replacePrefix(rest, "block.", "res.");
  return std::string(taming ? list : "conv_blocks") + "." + index + "." + rest;
}

}  // namespace

const char* publicVqFormatName(PublicVqFormat format) {
  return format == PublicVqFormat::Taming ? "taming" : "llamagen";
}

PublicVqConfig tamingConfig(const Json& yaml, const std::string& source) {
  if (!yaml.is_object()) throw std::runtime_error(source + ": not a mapping of settings");
  PublicVqConfig out;
  out.config = vqganBase();
  Fields root(yaml, source, "");
  std::optional<Fields> model;
  if (root.has("model")) model.emplace(root.object("model"));
  if (model) {
    const std::string target = model->text("target");
    if (!target.empty() && target != "taming.models.vqgan.VQModel" &&
        target != "ldm.models.autoencoder.VQModel" &&
        target != "ldm.models.autoencoder.VQModelInterface")
      model->fail("target", "\"" + target +
                                "\" is not a VQModel with a plain codebook (taming.models.vqgan."
                                "VQModel, or latent-diffusion's ldm.models.autoencoder.VQModel)");
  }
  const Fields params = model ? model->object("params") : root;
  const Fields dd = params.object("ddconfig");
  if (dd.boolean("double_z", false))
    dd.fail("double_z", "true makes a KL autoencoder (mean and variance), not a VQ model");
  const int in_channels = dd.integer("in_channels", 3), out_ch = dd.integer("out_ch", 3);
  if (in_channels != out_ch)
    dd.fail("out_ch", std::to_string(out_ch) + " differs from in_channels " +
                          std::to_string(in_channels) + ": Tokenbench reconstructs its input");
  if (params.has("remap"))
    params.fail("remap", "a remapped codebook subset is not supported; use the full codebook");
  core::ModelConfig& m = out.config.model;
  m.channels = in_channels;
  core::VqganConfig& v = m.vqgan;
  v.base_channels = dd.integer("ch");
  v.channel_mult = dd.integers("ch_mult");
  v.num_res_blocks = dd.integer("num_res_blocks");
  v.attn_resolutions = dd.integers("attn_resolutions", std::vector<int>{});
  v.z_channels = dd.integer("z_channels");
  v.resolution = dd.integer("resolution");
  if (v.channel_mult.empty()) dd.fail("ch_mult", "must not be empty");
  m.quantizer.codebook_size = params.integer("n_embed");
  m.quantizer.codebook_dim = params.integer("embed_dim");
  m.quantizer.vq_beta = params.number("beta", 0.25);
  m.quantizer.vq_l2_normalize = false;
  out.config.data.image_size = v.resolution;
  if (params.has("lossconfig"))
    out.notes.push_back(params.name("lossconfig") +
                        ": a training loss (LPIPS and discriminator), not part of the model");
  if (dd.number("dropout", 0.0) != 0.0)
    out.notes.push_back(dd.name("dropout") +
                        ": Tokenbench's VQGAN has no dropout (inference "
                        "is unchanged; fine-tuning runs without it)");
  return out;
}

PublicVqConfig llamagenConfig(const Json& args, const std::string& source,
                              const std::map<std::string, torch::Tensor>& state) {
  if (!args.is_object()) throw std::runtime_error(source + ": not a JSON object");
  PublicVqConfig out;
  out.config = vqganBase();
  Fields root(args, source, "");
  const Fields model_args = root.has("ModelArgs") ? root.object("ModelArgs") : root;
  std::optional<Fields> widths;
  if (root.has("Encoder/Decoder")) widths.emplace(root.object("Encoder/Decoder"));
  int ch = 128, blocks = 2;
  llamagenWidths(state, ch, blocks);
  core::ModelConfig& m = out.config.model;
  core::VqganConfig& v = m.vqgan;
  v.base_channels = widths ? widths->integer("ch", ch) : ch;
  v.num_res_blocks = widths ? widths->integer("num_res_blocks", blocks) : blocks;
  v.channel_mult = model_args.integers("encoder_ch_mult", std::vector<int>{1, 1, 2, 2, 4});
  const auto decoder_mult = model_args.integers("decoder_ch_mult", v.channel_mult);
  if (decoder_mult != v.channel_mult)
    model_args.fail("decoder_ch_mult",
                    "differs from encoder_ch_mult: Tokenbench's VQGAN mirrors "
                    "the encoder's levels in the decoder");
  v.z_channels = model_args.integer("z_channels", 256);
  m.quantizer.codebook_size = model_args.integer("codebook_size", 16384);
  m.quantizer.codebook_dim = model_args.integer("codebook_embed_dim", 8);
  m.quantizer.vq_l2_normalize = model_args.boolean("codebook_l2_norm", true);
  m.quantizer.vq_beta = model_args.number("commit_loss_beta", 0.25);
  if (model_args.number("entropy_loss_ratio", 0.0) != 0.0)
    out.notes.push_back(model_args.name("entropy_loss_ratio") +
                        ": Tokenbench's VQ has no entropy loss (inference is unchanged)");
  const int resolution = root.integer("resolution", 256);
  deepestAttention(v, resolution);
  out.config.data.image_size = resolution;
  return out;
}

PublicVqConfig llamagenNamedConfig(const std::string& model,
                                   const std::map<std::string, torch::Tensor>& state) {
  std::vector<int> mult;
  if (model == "VQ-16")
    mult = {1, 1, 2, 2, 4};
  else if (model == "VQ-8")
    mult = {1, 2, 2, 4};
  else
    throw std::invalid_argument("--model \"" + model +
                                "\": LlamaGen's released tokenizers are VQ-16 and VQ-8");
  Json args = {{"ModelArgs", {{"encoder_ch_mult", mult}, {"decoder_ch_mult", mult}}}};
  return llamagenConfig(args, "--model " + model, state);
}

std::vector<ReferenceTensor> publicVqTensors(const VqganTokenizerImpl& tokenizer,
                                             PublicVqFormat format) {
  const std::size_t levels = tokenizer.encoder->down->size();
  std::vector<ReferenceTensor> out;
  for (const auto& p : tokenizer.named_parameters(true)) {
    const std::string& name = p.key();
    std::string reference;
    if (name.rfind("encoder.", 0) == 0)
      reference = "encoder." + sideName(format, false, name.substr(8), levels);
    else if (name.rfind("decoder.", 0) == 0)
      reference = "decoder." + sideName(format, true, name.substr(8), levels);
    else
      reference = replacePrefix(name, "quantizer.", "quantize.");
    const auto shape = p.value().sizes().vec();
    out.push_back({name, reference, shape, shape});
  }
  return out;
}

std::string skippedRole(PublicVqFormat format, const std::string& key) {
  if (format == PublicVqFormat::Taming && key.rfind("loss.", 0) == 0)
    return "the training loss (LPIPS network and discriminator)";
  if (format == PublicVqFormat::LlamaGen && key == "quantize.codebook_used")
    return "training statistics (the codes seen last)";
  return "";
}

}  // namespace tb::trainer::weights
