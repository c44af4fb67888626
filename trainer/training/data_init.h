#pragma once
// Data-dependent initialisation (model.quantizer.data_init): the quantizer's input projection is
// scaled and shifted once, before the first step, so that each code dimension starts with zero
// mean and unit variance on real data: LFQ's signs then split the tokens evenly from step 1, and
// FSQ's levels are all in use instead of a few around zero.

#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer {

/// Encodes `clips` `[B, C, T, H, W]` with `tokenizer` and rescales the parameters
/// "quantizer.project_in.weight" / ".bias" in place. Returns the number of tokens the statistics
/// came from, or 0 when the quantizer has no input projection (nothing changes then).
std::int64_t initialiseQuantizerInput(Tokenizer& tokenizer, const torch::Tensor& clips);

}  // namespace tb::trainer
