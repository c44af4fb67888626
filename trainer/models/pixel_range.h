#pragma once
// model.pixel_range: the range of pixel values a tokenizer's weights were trained on. Frames are
// [-1, 1] everywhere in Tokenbench (data, metrics, LPIPS, samples); a tokenizer (and its
// discriminator) whose weights take [0, 1] frames, as magvit2-pytorch's trainer feeds them, maps
// them at its input and maps its output back.

#include "core/config_choices.h"

#include <torch/torch.h>

namespace tb::trainer {

/// MinusOneOne: [-1, 1], Tokenbench's own models; ZeroOne: [0, 1], magvit2-pytorch checkpoints.
using core::PixelRange;

/// Frames in [-1, 1] -> the range the weights take.
inline torch::Tensor toPixelRange(const torch::Tensor& frames, PixelRange range) {
  return range == PixelRange::ZeroOne ? (frames + 1) * 0.5 : frames;
}

/// The weights' output range -> [-1, 1] frames.
inline torch::Tensor fromPixelRange(const torch::Tensor& frames, PixelRange range) {
  return range == PixelRange::ZeroOne ? frames * 2 - 1 : frames;
}

}  // namespace tb::trainer
