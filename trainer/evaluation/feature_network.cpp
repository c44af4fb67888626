#include "trainer/evaluation/feature_network.h"

#include "core/sha256.h"

namespace tb::trainer::metrics {

FeatureNetwork::FeatureNetwork(bool videos, const std::string& file, const torch::Device& device)
    : m_videos(videos), m_file(file), m_device(device) {
  if (videos) {
    m_i3d = FvdI3d();
    m_i3d->loadWeights(file);
    m_i3d->to(device);
  } else {
    m_inception = FidInception();
    m_inception->loadWeights(file);
    m_inception->to(device);
  }
  m_sha256 = core::sha256OfFile(file);
}

const char* FeatureNetwork::networkName() const {
  return m_videos ? "I3D-400 (VideoGPT / SEED-Voken InceptionI3d), logits averaged over time"
                  : "InceptionV3 of pytorch-fid, 2048-d pool3 features";
}

const char* FeatureNetwork::preprocessing() const {
  return m_videos ? "uint8 frames, bilinear resize to 224 x 224, mapped to [-1, 1]"
                  : "uint8 / 255, bilinear resize to 299 x 299 without antialiasing, mapped to "
                    "[-1, 1]";
}

torch::Tensor FeatureNetwork::features(const std::vector<torch::Tensor>& clips) {
  torch::NoGradGuard no_grad;
  if (m_videos) return m_i3d->forward(torch::stack(clips).to(m_device));
  const torch::Tensor images = torch::cat(clips).to(m_device);
  return m_inception->forward(images.permute({0, 3, 1, 2}).to(torch::kFloat32) / 255.0);
}

}  // namespace tb::trainer::metrics
