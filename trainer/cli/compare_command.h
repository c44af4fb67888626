#pragma once
// The `compare` subcommand: the same clips reconstructed by several tokenizers (VQGAN frame by
// frame, MAGVIT-v2 clip by clip), scored with PSNR, SSIM and LPIPS, written as a review.

#include "core/trainer_command.h"

namespace tb::trainer::cli {

/// `compare`: takes the first `clips` clips of the data (every file's first clip, centre crop, at
/// the first checkpoint's data.image_size and data.num_frames; procedural clips of that
/// configuration without --data), reconstructs each with every tokenizer and writes to `out`:
/// metrics.json (per clip, mean, and mean by frame position, per tokenizer), metrics.csv (clip,
/// source, tokenizer, psnr, ssim, lpips), clip_<k>.gif (original | each tokenizer side by side) and
/// grid.png (one row per clip: original | each tokenizer, the clip's middle frame, metrics printed
/// under each image). Prints the means as one JSON line on stdout. Exit 0; 2 for bad arguments,
/// checkpoints, data or weight files (the message names the file), 1 when the output cannot be
/// written.
int compare(const core::CompareCommand& command);

}  // namespace tb::trainer::cli
