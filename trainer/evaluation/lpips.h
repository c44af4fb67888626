#pragma once
// Lpips: the learned perceptual image patch similarity of Zhang et al. 2018 (the `lpips` 0.1
// Python package), AlexNet or VGG16 backbone. Serves as an evaluation metric and, being
// differentiable w.r.t. its inputs, as the perceptual loss of training.
// Definitions and reference values: shared/fixtures/lpips/README.md.

#include "core/config_choices.h"
#include "trainer/media/video_frames.h"

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tb::trainer::metrics {

/// Alex: torchvision alexnet().features, taps after ReLUs 1-5 (features 1, 4, 7, 9, 11); Vgg:
/// torchvision vgg16().features, taps relu1_2 .. relu5_3 (features 3, 8, 15, 22, 29).
using core::LpipsNet;

/// "alex" or "vgg"; anything else throws std::invalid_argument naming the value.
LpipsNet parseLpipsNet(const std::string& name);
const char* lpipsNetName(LpipsNet net);
/// Channel widths of the five taps: alex 64, 192, 384, 256, 256; vgg 64, 128, 256, 512, 512.
std::array<int64_t, 5> lpipsTapChannels(LpipsNet net);

/// The network. Registered children: `features` (torchvision's `features` Sequential up to the
/// last tap, so its parameters are named "features.<index>.weight/bias" as in torchvision's
/// state_dict), parameters lin0 .. lin4 ([1, C, 1, 1], the 1x1 conv weights without bias) and
/// buffers shift / scale ([1, 3, 1, 1], the ScalingLayer). Every parameter has
/// requires_grad false: the network is fixed, gradients flow only to the inputs.
class LpipsImpl : public torch::nn::Module {
 public:
  /// Randomly initialised weights drawn from a CPU generator seeded with `seed` (the global
  /// torch RNG is untouched): conv weights and biases uniform in +-1/sqrt(fan_in) (PyTorch's
  /// default), lin weights uniform in [0, 1/sqrt(C)] (LPIPS lin weights are non-negative).
  /// For benchmarks and tests; call loadWeights for meaningful distances.
  explicit LpipsImpl(LpipsNet net = LpipsNet::Alex, uint64_t seed = 0);

  /// Replaces the weights from two `torch.save` files, each a plain dict (not an OrderedDict)
  /// of name -> tensor: `backbone_file` with torchvision's keys features.<i>.weight/bias,
  /// `lin_file` with the lpips package's keys lin<k>.model.1.weight. Extra keys are ignored.
  /// Throws std::runtime_error "<file>: <problem>" for a missing or unreadable file, a file
  /// that is not a dict, "<file>: missing <key>", a value that is not a tensor and
  /// "<file>: <key> has shape [..] but <net> needs [..]". Nothing is changed on failure.
  void loadWeights(const std::string& backbone_file, const std::string& lin_file);

  /// x, y: [B, 3, H, W] float in [-1, 1], H and W >= 31 for alex, >= 16 for vgg.
  /// Returns [B] distances (>= 0 with real lin weights); differentiable w.r.t. x and y.
  /// Throws std::invalid_argument for other shapes, smaller images, or x and y of different shapes.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& y);

  /// The five backbone activations of scaled input x ([B, 3, H, W] in [-1, 1]), before the
  /// channel normalisation: [B, C_k, H_k, W_k] with C_k = lpipsTapChannels(net())[k].
  std::vector<torch::Tensor> taps(const torch::Tensor& x);

  LpipsNet net() const { return m_net; }

 private:
  LpipsNet m_net;
  std::vector<int64_t> m_tapIndices;  // features indices whose outputs are tapped
  torch::nn::Sequential m_features{nullptr};
  std::vector<torch::Tensor> m_lins;
  torch::Tensor m_shift, m_scale;
};
TORCH_MODULE(Lpips);

/// An Lpips of `net` with the weights of the two files (see LpipsImpl::loadWeights), in eval mode.
Lpips loadLpips(LpipsNet net, const std::string& backbone_file, const std::string& lin_file);

/// Mean over frames of the LPIPS distance between frame t of `a` and of `b`, uint8 mapped to
/// [-1, 1] as x / 127.5 - 1, computed without gradients, `batch` frames at a time, on the CPU.
/// Throws std::invalid_argument when sizes or frame counts differ (see checkComparable).
double lpips(Lpips& model, const media::VideoFrames& a, const media::VideoFrames& b, int batch = 8);

}  // namespace tb::trainer::metrics
