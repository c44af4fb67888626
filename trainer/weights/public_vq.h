#pragma once
// The public VQGAN checkpoints in Tokenbench's terms: CompVis taming-transformers' VQModel
// (vqgan_imagenet_f16_1024 / _16384, latent-diffusion's vq-f8: a PyTorch Lightning .ckpt and its
// YAML config) and LlamaGen's VQModel (vq_ds16_c2i.pt / vq_ds8_c2i.pt: a torch.save of
// {"model": state_dict, ...}). Both are the architecture of Tokenbench's VQGAN tokenizer under
// other tensor names: taming's decoder numbers its levels by resolution (up.0 runs last),
// LlamaGen's in execution order (conv_blocks.0 runs first) and puts attention at the deepest
// level only; LlamaGen l2-normalises latents and codebook rows at every lookup
// (model.quantizer.vq_l2_normalize).

#include "core/run_config.h"
#include "trainer/models/vqgan_tokenizer.h"
#include "trainer/weights/magvit2_names.h"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace tb::trainer::weights {

enum class PublicVqFormat { Taming, LlamaGen };

/// "taming" / "llamagen".
const char* publicVqFormatName(PublicVqFormat format);

/// A public model's settings as a Tokenbench configuration (model.kind vqgan), plus what of the
/// source configuration was left aside ("lossconfig: a training loss, not part of the model").
struct PublicVqConfig {
  core::RunConfig config;
  std::vector<std::string> notes;
};

/// taming's configuration (its configs/*.yaml read into JSON: {"model": {"target": ...,
/// "params": {embed_dim, n_embed, ddconfig: {...}}}}, or the params object alone). Throws
/// std::runtime_error "SOURCE: model.params.ddconfig.ch: ..." naming the field for a missing or
/// mistyped value, and refuses what Tokenbench's VQGAN cannot express (double_z, a target other
/// than taming.models.vqgan.VQModel, in_channels != out_ch, remap).
PublicVqConfig tamingConfig(const nlohmann::json& yaml, const std::string& source);

/// LlamaGen's configuration: {"ModelArgs": {codebook_size, codebook_embed_dim, codebook_l2_norm,
/// commit_loss_beta, encoder_ch_mult, decoder_ch_mult, z_channels, ...}, "Encoder/Decoder":
/// {ch, num_res_blocks}, "resolution"} (ModelArgs' fields may also stand at the top level). ch and
/// num_res_blocks default to what `state` (the checkpoint's state dict) shows. Throws
/// std::runtime_error naming the field.
PublicVqConfig llamagenConfig(const nlohmann::json& args, const std::string& source,
                              const std::map<std::string, torch::Tensor>& state);

/// The released LlamaGen models: "VQ-16" (ch_mult 1,1,2,2,4) and "VQ-8" (1,2,2,4), codebook
/// 16384 x 8, l2-normalised, z_channels 256, with ch and num_res_blocks read from `state`.
/// Throws std::invalid_argument for another name.
PublicVqConfig llamagenNamedConfig(const std::string& model,
                                   const std::map<std::string, torch::Tensor>& state);

/// Every parameter of `tokenizer` with its name and shape in `format`'s state dict, in
/// Tokenbench's state-dict order. Quantizer buffers (Tokenbench's own restart and EMA state)
/// have no counterpart and are left out.
std::vector<ReferenceTensor> publicVqTensors(const VqganTokenizerImpl& tokenizer,
                                             PublicVqFormat format);

/// Why a key of `format`'s state dict is deliberately not imported ("training loss: LPIPS and
/// discriminator", "training statistics: codes seen"), or "" for a key that belongs to the model.
std::string skippedRole(PublicVqFormat format, const std::string& key);

}  // namespace tb::trainer::weights
