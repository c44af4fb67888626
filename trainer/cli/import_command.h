#pragma once
// `import`: another project's tokenizer checkpoint -> a Tokenbench checkpoint folder.

#include <string>

namespace tb::trainer::cli {

struct ImportArgs {
  std::string format;   ///< "magvit2", "taming" or "llamagen"
  std::string weights;  ///< the source checkpoint
  /// magvit2: KWARGS.json; taming: its YAML (or the same as JSON); llamagen: ModelArgs JSON.
  std::string config;
  std::string model;  ///< llamagen without --config: "VQ-16" or "VQ-8"
  std::string name;   ///< what reports call it; default: the format and the file's name
  std::string out;    ///< checkpoint folder to create (must not exist)
};

/// `import --format taming|llamagen`: reads a taming-transformers VQModel checkpoint (a PyTorch
/// Lightning .ckpt: its "state_dict", nothing else of the pickle resolved) with its YAML config,
/// or a LlamaGen VQModel checkpoint (the "ema", "model" or "state_dict" entry, in that order, as
/// LlamaGen's vq_demo.py takes them) with ModelArgs JSON or --model VQ-16|VQ-8, maps every
/// tensor onto Tokenbench's VQGAN tokenizer and writes a checkpoint folder (config.json,
/// model.safetensors with the source's name in its metadata) that tokenize, detokenize, compare,
/// metrics, the window and train.init_checkpoint accept. Says on stderr what it skipped (the
/// training loss's LPIPS and discriminator, optimizer states, LlamaGen's codebook_used, the
/// Lightning callbacks). `--format magvit2` is import-magvit2. Exit 0 (the folder on stdout); 2
/// for an existing `out`, an unreadable, truncated or garbled file, a legacy (pre-zip) torch
/// file, a configuration Tokenbench cannot express or one that does not fit the weights (the
/// first tensor that differs named with both shapes, then every difference); 1 when writing
/// fails.
int importCheckpoint(const ImportArgs& args);

}  // namespace tb::trainer::cli
