#pragma once
// The built-in procedural dataset: clips of shapes moving over textured backgrounds. Clip i
// of a seed is always the same clip, so nothing needs downloading and every test is repeatable.

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer::data {

class SyntheticClips {
 public:
  /// `count` distinct clips of `frames` x `size` x `size` RGB.
  SyntheticClips(std::int64_t count, int frames, int size, std::uint64_t seed);

  std::int64_t size() const { return m_count; }

  /// Clip `index` (taken modulo size()) as `[3, T, H, W]` float in [-1, 1].
  torch::Tensor clip(std::int64_t index) const;

  /// Clips `indices` stacked to `[B, 3, T, H, W]`.
  torch::Tensor batch(const std::vector<std::int64_t>& indices) const;

 private:
  std::int64_t m_count;
  int m_frames;
  int m_size;
  std::uint64_t m_seed;
};

}  // namespace tb::trainer::data
