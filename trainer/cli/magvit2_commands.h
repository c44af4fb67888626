#pragma once
// Checkpoints of lucidrains' magvit2-pytorch in and out: import-magvit2 and export-magvit2.

#include <string>

namespace tb::trainer::cli {

struct ImportMagvit2Args {
  /// The reference's weights: a safetensors file of VideoTokenizer.state_dict(), or the
  /// `torch.save` file VideoTokenizer.save() writes ({"model_state_dict", "version", "config"}).
  std::string weights;
  /// KWARGS.json: the VideoTokenizer keyword arguments; may be empty when `weights` is a .pt file
  /// whose saved configuration is readable.
  std::string config;
  std::string out;   ///< checkpoint folder to create (must not exist)
  std::string name;  ///< what reports call it; default "magvit2-pytorch <file name>"
};

/// `import --format magvit2` (and its older name `import-magvit2`): maps every tensor of the
/// reference file onto Tokenbench's MAGVIT-v2 tokenizer (and `discr.*` onto its frame discriminator
/// when they fit; else they are reported on stderr and left out) and writes a checkpoint folder
/// (model.safetensors, discriminator.safetensors, config.json with model.pixel_range zero_one) that
/// tokenize, detokenize, compare, export-magvit2, the window and train.init_checkpoint accept.
/// Prints the folder on stdout. Exit 0; 2 for an existing `out`, unreadable input, arguments
/// Tokenbench cannot honour, or tensors that do not line up (every reference tensor without a place
/// and every Tokenbench tensor left unfilled is listed on stderr with its shape); 1 when writing
/// fails.
int importMagvit2(const ImportMagvit2Args& args);

struct ExportMagvit2Args {
  std::string checkpoint;    ///< checkpoint folder or run directory (its newest checkpoint)
  std::string out;           ///< .safetensors file to write
  std::string config_out;    ///< KWARGS.json to write, or empty
  bool raw_weights = false;  ///< model.safetensors even when EMA weights exist
};

/// `export-magvit2`: writes the tokenizer (EMA weights when the checkpoint has them) under the
/// reference's tensor names and shapes, plus `discr.*` when the checkpoint has a frame
/// discriminator the reference can build, and the VideoTokenizer keyword arguments
/// (`config_out`). Settings the reference cannot express are refused, each named on stderr.
/// The file's metadata records the pixel range. Exit 0; 2 for a bad checkpoint or a refused
/// setting; 1 when writing fails.
int exportMagvit2(const ExportMagvit2Args& args);

}  // namespace tb::trainer::cli
