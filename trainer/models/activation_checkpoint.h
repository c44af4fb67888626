#pragma once
// Activation checkpointing (train.activation_checkpointing): a layer run this way keeps only its
// input for backward; its inner activations are freed after forward and recomputed (with the
// same autocast state) when backward reaches it. LibTorch has no torch.utils.checkpoint: this is
// a torch::autograd::Function. The layers must be deterministic (MAGVIT-v2's are: no dropout).

#include "trainer/models/magvit_blocks.h"

#include <torch/torch.h>

namespace tb::trainer {

/// `layer.forward(x, cond)` with the layer's activations recomputed in backward. Gradients flow
/// to `x`, `cond` (when defined) and every parameter of `layer` that requires grad, equal to those
/// of a plain forward. Without grad mode (or nothing requiring grad) it is a plain forward.
torch::Tensor checkpointedForward(MagvitLayer& layer, const torch::Tensor& x,
                                  const torch::Tensor& cond);

}  // namespace tb::trainer
