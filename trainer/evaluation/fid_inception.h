#pragma once
// The InceptionV3 of rFID as pytorch-fid computes it (v0.3.0, the network SEED-Voken /
// Open-MAGVIT2 evaluate with): torchvision's Inception3 (1008 classes, no aux logits) with
// pytorch-fid's FID patches, up to the 2048-d pool3 features. Protocol and reference values:
// shared/fixtures/fid_fvd/README.md.
//
// - Input: RGB in [0, 1] (uint8 / 255), any size; resized to 299 x 299 (bilinear,
//   align_corners false, no antialiasing, no crop), then 2x - 1.
// - BasicConv2d: conv without bias, BatchNorm (eps 0.001, running statistics), ReLU.
// - The patched pools: InceptionA, InceptionC and the first InceptionE (Mixed_7b) average with
//   count_include_pad false; Mixed_7c max-pools in its pool branch.
//
// Registered names are the reference's state_dict keys ("Conv2d_1a_3x3.conv.weight",
// "Mixed_7c.branch_pool.bn.running_var", ..., "fc.weight"), so the weight file users have,
// pt_inception-2015-12-05-6726825d.pth, loads by name.

#include <torch/torch.h>

#include <memory>
#include <string>

namespace tb::trainer::metrics {

class FidInceptionImpl : public torch::nn::Module {
 public:
  /// Every tensor zero (BatchNorm variances one) until loadWeights() or a test fills them.
  FidInceptionImpl();

  /// Loads pt_inception-2015-12-05-6726825d.pth (a torch.save of the reference's state_dict)
  /// by key: loadReferenceWeights(), whose errors name the file and the first key that does not
  /// fit. Nothing is changed on failure.
  void loadWeights(const std::string& path);

  /// [B, 3, H, W] float RGB in [0, 1] -> [B, 2048] pool3 features (float32, inference).
  torch::Tensor forward(const torch::Tensor& images);

  /// The network's input for `images` ([B, 3, H, W] in [0, 1]): resized to 299 and mapped to
  /// [-1, 1].
  static torch::Tensor preprocess(const torch::Tensor& images);

  /// The blocks of the forward pass, for checking a port step by step: 0 after the first max
  /// pool (64 channels), 1 after the second (192), 2 after Mixed_6e (768), 3 the pooled 2048.
  torch::Tensor block(int index, const torch::Tensor& input);

 private:
  struct Layers;
  std::shared_ptr<Layers> m_layers;
};
TORCH_MODULE(FidInception);

}  // namespace tb::trainer::metrics
