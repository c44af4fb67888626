#pragma once
// The I3D of rFVD as SEED-Voken / Open-MAGVIT2 compute it (VideoGPT's InceptionI3d, 400
// Kinetics classes): its 400 logits, averaged over time, are the clip's features. Protocol and
// reference values: shared/fixtures/fid_fvd/README.md.
//
// - Input: uint8 RGB clips [B, T, H, W, 3], T >= 9; every frame resized to 224 x 224 (bilinear,
//   align_corners false, no antialiasing: a non-square frame is stretched, not cropped), then
//   2x / 255 - 1.
// - Unit3D: TensorFlow "SAME" zero padding computed from the input size (pad // 2 in front, the
//   rest behind), conv3d without bias, BatchNorm (eps 1e-5, running statistics), ReLU; the max
//   pools pad the same way. The head averages (2, 7, 7), applies `logits` (1x1x1 with bias, no
//   BatchNorm, no ReLU) and takes the mean over the time steps left.
//
// Registered names are the reference's state_dict keys ("Conv3d_1a_7x7.conv3d.weight",
// "Mixed_5c.b3b.bn.running_var", "logits.conv3d.bias", ...), so the weight file users have,
// i3d_pretrained_400.pt, loads by name.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer::metrics {

class FvdI3dImpl : public torch::nn::Module {
 public:
  /// Every tensor zero (BatchNorm variances one) until loadWeights() or a test fills them.
  FvdI3dImpl();

  /// Loads i3d_pretrained_400.pt (a torch.save of the reference's state_dict) by key. Throws
  /// std::runtime_error "<file>: <problem>" as FidInception::loadWeights does. Nothing is
  /// changed on failure.
  void loadWeights(const std::string& path);

  /// uint8 clips [B, T, H, W, 3] (T >= 9) -> [B, 400] logits (float32, inference). Throws
  /// std::invalid_argument naming the shape otherwise.
  torch::Tensor forward(const torch::Tensor& clips);

  /// The network's input for `clips`: [B, 3, T, 224, 224] in [-1, 1].
  static torch::Tensor preprocess(const torch::Tensor& clips);

  /// The 16 endpoints of the forward pass ("Conv3d_1a_7x7" ... "Mixed_5c") for an input from
  /// preprocess(), then "logits_per_t" [B, 400, T'] before the time mean: for checking a port
  /// step by step.
  std::vector<std::pair<std::string, torch::Tensor>> endpoints(const torch::Tensor& input);

 private:
  struct Layers;
  std::shared_ptr<Layers> m_layers;
};
TORCH_MODULE(FvdI3d);

/// The shortest clip the I3D takes (its time axis halves three times and the head pools 2).
constexpr std::int64_t kFvdMinFrames = 9;

}  // namespace tb::trainer::metrics
