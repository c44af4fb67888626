#pragma once
// The files of one checkpoint folder, named once. A checkpoint folder is checkpoints/step_<N>/
// of a run directory (see RunDirectory), or a folder of its own written by `init`,
// `import` or `baseline`; the trainer writes it, the trainer and the window read it.
//
//   config.json                  the run configuration that wrote it
//   state.json                   step, learning-rate scale, schedule end, seconds, batches, ...
//   model.safetensors            tokenizer weights; a folder holding it is a checkpoint
//   ema.safetensors              the EMA of the tokenizer weights (when train.ema is on)
//   optimizer.safetensors        the tokenizer's AdamW state
//   discriminator.safetensors    with the GAN on
//   discr_optimizer.safetensors  the discriminator's AdamW state
//   rng.safetensors              random generator states
//   COMPLETE                     written last; a folder without it is incomplete and ignored

namespace tb::core::checkpoint_files {

inline constexpr const char* kConfig = "config.json";
inline constexpr const char* kState = "state.json";
inline constexpr const char* kModel = "model.safetensors";
inline constexpr const char* kEma = "ema.safetensors";
inline constexpr const char* kOptimizer = "optimizer.safetensors";
inline constexpr const char* kDiscriminator = "discriminator.safetensors";
inline constexpr const char* kDiscriminatorOptimizer = "discr_optimizer.safetensors";
inline constexpr const char* kRng = "rng.safetensors";
inline constexpr const char* kComplete = "COMPLETE";

/// model.safetensors metadata of an imported checkpoint: what the tokenizer is, for reports
/// ("taming vqgan_imagenet_f16_16384", "LlamaGen vq_ds16_c2i", "magvit2-pytorch tokenizer").
inline constexpr const char* kSourceNameKey = "source_name";

}  // namespace tb::core::checkpoint_files
