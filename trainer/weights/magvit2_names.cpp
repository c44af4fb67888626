#include "trainer/weights/magvit2_names.h"

#include "trainer/models/lookup_free_quantizer.h"

#include <optional>
#include <utility>

namespace tb::trainer::weights {
namespace {

// A name prefix in Tokenbench and what replaces it in the reference.
using Rules = std::vector<std::pair<std::string, std::string>>;

std::optional<std::string> applyRules(const Rules& rules, const std::string& name) {
  for (const auto& [from, to] : rules)
    if (name.rfind(from, 0) == 0) return to + name.substr(from.size());
  return std::nullopt;
}

Rules joined(Rules a, const Rules& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Residual(Sequential(CausalConv3d, ELU, Conv3d, ELU, SqueezeExcite)).
const Rules& residualRules() {
  static const Rules r = {{"conv.conv.", "fn.0.conv."},
                          {"conv_out.", "fn.2."},
                          {"gate.to_k.", "fn.4.to_k."},
                          {"gate.net_in.", "fn.4.net.0."},
                          {"gate.net_out.", "fn.4.net.2."}};
  return r;
}

// Attention: norm, to_qkv = Sequential(Linear, Rearrange), mem_kv, to_out = Sequential(Rearrange,
// Linear). MaybeAdaptiveNorm adds a level ("norm.norm.") the reference does not have.
Rules attentionRules(const std::string& to) {
  return {{"attn.norm.norm.", to + "norm."},
          {"attn.to_qkv.", to + "to_qkv.0."},
          {"attn.to_out.", to + "to_out.1."},
          {"attn.mem_kv", to + "mem_kv"}};
}

// LinearSpaceAttention: norm, then TaylorSeriesLinearAttn `attn` with Sequential(Linear, ...)
// projections.
Rules linearAttentionRules(const std::string& to) {
  return {{"attn.norm.norm.", to + "norm."},
          {"attn.to_q.", to + "attn.to_q.0."},
          {"attn.to_kv.", to + "attn.to_kv.0."},
          {"attn.to_out.", to + "attn.to_out.0."}};
}

// FeedForward: norm, net = Sequential(conv, GEGLU, conv).
Rules feedForwardRules(const std::string& to) {
  return {{"ff.norm.norm.", to + "norm."},
          {"ff.proj_in.", to + "net.0."},
          {"ff.proj_out.", to + "net.2."}};
}

// The reference name of `suffix` inside the encoder (or decoder) layer of one stage.
std::optional<std::string> stageName(const std::string& type, bool decoder,
                                     const std::string& suffix) {
  if (type == "residual") return applyRules(residualRules(), suffix);
  if (type == "consecutive_residual") {
    const auto dot = suffix.find('.');
    if (dot == std::string::npos) return std::nullopt;
    const auto inner = applyRules(residualRules(), suffix.substr(dot + 1));
    if (!inner) return std::nullopt;
    return suffix.substr(0, dot + 1) + *inner;
  }
  if (type == "cond_residual") return suffix;  // to_cond, conv.weights, conv_out: same names
  if (type == "compress_space" || type == "compress_time")
    return applyRules({{"conv.", decoder ? "net.0." : "conv."}}, suffix);
  // Sequential(Residual(attention), Residual(FeedForward)); time attention and its feed-forward
  // are also wrapped in TokenShift.
  if (type == "attend_space" || type == "cond_attend_space")
    return applyRules(joined(attentionRules("0.fn."), feedForwardRules("1.fn.")), suffix);
  if (type == "linear_attend_space" || type == "cond_linear_attend_space")
    return applyRules(joined(linearAttentionRules("0.fn."), feedForwardRules("1.fn.")), suffix);
  if (type == "attend_time" || type == "cond_attend_time")
    return applyRules(joined(attentionRules("0.fn.fn."), feedForwardRules("1.fn.fn.")), suffix);
  if (type == "gateloop_time")  // ToTimeSequence(Residual(SimpleGateLoopLayer))
    return applyRules({{"norm.", "fn.fn.norm."}, {"to_qkva.", "fn.fn.to_qkva.0."}}, suffix);
  return std::nullopt;
}

// "encoder_layers.3.attn.to_qkv.weight" -> {3, "attn.to_qkv.weight"}.
std::optional<std::pair<std::size_t, std::string>> layerIndex(const std::string& name,
                                                              const std::string& prefix) {
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const auto dot = name.find('.', prefix.size());
  if (dot == std::string::npos) return std::nullopt;
  return std::make_pair(
      static_cast<std::size_t>(std::stoul(name.substr(prefix.size(), dot - prefix.size()))),
      name.substr(dot + 1));
}

std::optional<std::string> tokenizerName(const std::string& name,
                                         const std::vector<MagvitStage>& stages) {
  const std::size_t n = stages.size();
  if (auto enc = layerIndex(name, "encoder_layers.")) {
    if (enc->first >= n) return std::nullopt;
    auto inner = stageName(stages[enc->first].type, false, enc->second);
    if (!inner) return std::nullopt;
    return "encoder_layers." + std::to_string(enc->first) + "." + *inner;
  }
  if (auto dec = layerIndex(name, "decoder_layers.")) {
    // Decoder layer j mirrors stage n - 1 - j; the reference orders its decoder the same way.
    if (dec->first >= n) return std::nullopt;
    auto inner = stageName(stages[n - 1 - dec->first].type, true, dec->second);
    if (!inner) return std::nullopt;
    return "decoder_layers." + std::to_string(dec->first) + "." + *inner;
  }
  static const Rules top = {{"conv_in.", "conv_in."},
                            {"conv_out.", "conv_out."},
                            {"conv_in_first_frame.", "conv_in_first_frame."},
                            {"conv_out_first_frame.", "conv_out_first_frame."},
                            {"encoder_cond_in.", "encoder_cond_in.0."},
                            {"decoder_cond_in.", "decoder_cond_in.0."},
                            {"quantizer.", "quantizers."}};
  // The reference appends its final LayerNorm to the encoder: Sequential(Rearrange, LayerNorm,
  // Rearrange) at index n.
  return applyRules(joined(top, {{"encoder_norm.", "encoder_layers." + std::to_string(n) + ".1."}}),
                    name);
}

std::vector<std::int64_t> shapeOf(const torch::Tensor& t) {
  return {t.sizes().begin(), t.sizes().end()};
}

}  // namespace

std::vector<ReferenceTensor> referenceTokenizerTensors(const MagvitTokenizerImpl& tokenizer) {
  std::vector<ReferenceTensor> out;
  for (const auto& [name, tensor] : stateDict(tokenizer)) {
    const auto reference = tokenizerName(name, tokenizer.stages());
    if (!reference) throw WeightsError("tensor '" + name + "' has no magvit2-pytorch name");
    out.push_back({name, *reference, shapeOf(tensor), shapeOf(tensor)});
  }
  return out;
}

std::vector<ReferenceTensor> referenceDiscriminatorTensors(const FrameDiscriminatorImpl& discr) {
  Rules rules;
  for (std::size_t i = 0; i < discr.blocks->size(); ++i) {
    if (!discr.attn_blocks[i])
      throw WeightsError(
          "frame discriminator block " + std::to_string(i) +
          " has no attention; magvit2-pytorch's has linear attention after every block (list "
          "every block's input side in model.discriminator.attn_resolutions)");
    const std::string b = "blocks." + std::to_string(i) + ".";
    const std::string to = "discr.blocks." + std::to_string(i) + ".";
    // ModuleList([DiscriminatorBlock, Sequential(Residual(LinearSpaceAttention),
    // Residual(FeedForward))]).
    rules.insert(rules.end(), {{b + "conv_res.", to + "0.conv_res."},
                               {b + "conv1.", to + "0.net.0."},
                               {b + "conv2.", to + "0.net.2."},
                               {b + "downsample.", to + "0.downsample.1."}});
    const std::string a = "attn_blocks_" + std::to_string(i) + ".";
    for (auto [from, into] :
         joined(linearAttentionRules(to + "1.0.fn."), feedForwardRules(to + "1.1.fn.")))
      rules.emplace_back(a + from, into);
  }
  rules.insert(rules.end(),
               {{"to_logits_conv.", "discr.to_logits.0."}, {"to_logits.", "discr.to_logits.3."}});
  std::vector<ReferenceTensor> out;
  for (const auto& [name, tensor] : stateDict(discr)) {
    const auto reference = applyRules(rules, name);
    if (!reference)
      throw WeightsError("discriminator tensor '" + name + "' has no magvit2-pytorch name");
    auto shape = shapeOf(tensor);
    auto reference_shape = shape;
    // The reference's discriminator feed-forward is 2-D: drop the 1-frame time axis.
    if (name.find(".ff.") != std::string::npos && shape.size() >= 3 && shape.back() == 1)
      reference_shape.pop_back();
    out.push_back({name, *reference, shape, reference_shape});
  }
  return out;
}

NamedTensors referenceConstants(const MagvitTokenizerImpl& tokenizer) {
  const auto lfq = std::dynamic_pointer_cast<LookupFreeQuantizerImpl>(tokenizer.quantizer());
  if (!lfq) return {};
  const std::int64_t k = lfq->bitsPerCodebook();
  return {{"quantizers.mask", torch::pow(2, torch::arange(k - 1, -1, -1, torch::kLong))}};
}

}  // namespace tb::trainer::weights
