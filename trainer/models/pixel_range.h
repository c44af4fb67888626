#pragma once
// model.pixel_range: the range of pixel values a tokenizer's weights were trained on. Frames are
// [-1, 1] everywhere in Tokenbench (data, metrics, LPIPS, samples); a tokenizer (and its
// discriminator) whose weights take [0, 1] frames, as magvit2-pytorch's trainer feeds them, maps
// them at its input and maps its output back.

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace tb::trainer {

enum class PixelRange {
  MinusOneOne,  ///< [-1, 1]: Tokenbench's own models
  ZeroOne,      ///< [0, 1]: magvit2-pytorch checkpoints
};

/// "minus_one_one" / "zero_one"; throws std::invalid_argument naming model.pixel_range.
inline PixelRange parsePixelRange(const std::string& name) {
  if (name == "minus_one_one") return PixelRange::MinusOneOne;
  if (name == "zero_one") return PixelRange::ZeroOne;
  throw std::invalid_argument(
      "model.pixel_range: expected \"minus_one_one\" or \"zero_one\", got \"" + name + "\"");
}

/// Frames in [-1, 1] -> the range the weights take.
inline torch::Tensor toPixelRange(const torch::Tensor& frames, PixelRange range) {
  return range == PixelRange::ZeroOne ? (frames + 1) * 0.5 : frames;
}

/// The weights' output range -> [-1, 1] frames.
inline torch::Tensor fromPixelRange(const torch::Tensor& frames, PixelRange range) {
  return range == PixelRange::ZeroOne ? frames * 2 - 1 : frames;
}

}  // namespace tb::trainer
