#pragma once
// The feature network of an rFID or rFVD protocol, loaded from the weight file users have:
// pytorch-fid's InceptionV3 (images, or every frame of a clip) or the I3D-400 of VideoGPT /
// SEED-Voken (clips of at least 9 frames). `evaluate` and training's eval.every_steps use it.

#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/fvd_i3d.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tb::trainer::metrics {

class FeatureNetwork {
 public:
  /// Loads `file` (the I3D's when `videos`, else InceptionV3's) onto `device` and hashes it.
  /// Throws std::runtime_error "<file>: <problem>" naming the first key that does not fit.
  FeatureNetwork(bool videos, const std::string& file, const torch::Device& device);

  bool videos() const { return m_videos; }
  const char* metric() const { return m_videos ? "rfvd" : "rfid"; }
  std::int64_t dim() const { return m_videos ? 400 : 2048; }
  const std::string& file() const { return m_file; }
  const std::string& sha256() const { return m_sha256; }
  /// The network and its preprocessing in words, for evaluation cards.
  const char* networkName() const;
  const char* preprocessing() const;

  /// [N, dim] features of uint8 frames ([T, H, W, 3] each): for the I3D one row per clip, for
  /// InceptionV3 one row per frame (an image is a one-frame clip).
  torch::Tensor features(const std::vector<torch::Tensor>& clips);

 private:
  bool m_videos;
  std::string m_file, m_sha256;
  torch::Device m_device;
  FidInception m_inception{nullptr};
  FvdI3d m_i3d{nullptr};
};

}  // namespace tb::trainer::metrics
