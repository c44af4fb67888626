#include "trainer/data/synthetic_clips.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tb::trainer::data {
namespace {

struct Shape {
  int kind;  // 0 disc, 1 square, 2 ring
  float x, y, vx, vy, radius;
  float rgb[3];
};

float clamp01(float v) { return std::min(1.0f, std::max(0.0f, v)); }

}  // namespace

SyntheticClips::SyntheticClips(std::int64_t count, int frames, int size, std::uint64_t seed)
    : m_count(count), m_frames(frames), m_size(size), m_seed(seed) {
  TORCH_CHECK(count >= 1 && frames >= 1 && size >= 1,
              "SyntheticClips: count, frames and size must be >= 1");
}

torch::Tensor SyntheticClips::clip(std::int64_t index) const {
  index = ((index % m_count) + m_count) % m_count;
  // One generator per clip, seeded from (seed, index): the clip does not depend on which
  // thread or rank draws it, or in which order.
  std::seed_seq seq{static_cast<std::uint32_t>(m_seed), static_cast<std::uint32_t>(m_seed >> 32),
                    static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32)};
  std::mt19937 rng(seq);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);

  const float s = static_cast<float>(m_size);
  // Background: two-colour gradient with a sinusoidal texture drifting over time.
  float c0[3], c1[3];
  for (int c = 0; c < 3; ++c) {
    c0[c] = u(rng);
    c1[c] = u(rng);
  }
  const float angle = u(rng) * 6.2831853f;
  const float freq = 2.0f + 6.0f * u(rng);
  const float drift = (u(rng) - 0.5f) * 0.3f;
  const float texture = 0.15f * u(rng);

  std::vector<Shape> shapes(1 + static_cast<int>(u(rng) * 3.0f));
  for (auto& sh : shapes) {
    sh.kind = static_cast<int>(u(rng) * 3.0f) % 3;
    sh.radius = s * (0.08f + 0.17f * u(rng));
    sh.x = s * u(rng);
    sh.y = s * u(rng);
    sh.vx = s * (u(rng) - 0.5f) * 0.12f;
    sh.vy = s * (u(rng) - 0.5f) * 0.12f;
    for (float& v : sh.rgb) v = u(rng);
  }

  const int T = m_frames, H = m_size, W = m_size;
  auto out = torch::empty({3, T, H, W}, torch::kFloat32);
  float* p = out.data_ptr<float>();
  const float ca = std::cos(angle), sa = std::sin(angle);
  for (int t = 0; t < T; ++t) {
    for (int y = 0; y < H; ++y) {
      for (int x = 0; x < W; ++x) {
        const float along = (ca * x + sa * y) / s;
        const float wave = std::sin(6.2831853f * (freq * along + drift * t));
        float px[3];
        for (int c = 0; c < 3; ++c)
          px[c] = c0[c] + (c1[c] - c0[c]) * clamp01(along) + texture * wave;
        for (const auto& sh : shapes) {
          // Shapes bounce off the borders.
          auto bounce = [&](float pos, float vel) {
            float q = std::fmod(pos + vel * t, 2.0f * s);
            if (q < 0) q += 2.0f * s;
            return q > s ? 2.0f * s - q : q;
          };
          const float dx = x + 0.5f - bounce(sh.x, sh.vx);
          const float dy = y + 0.5f - bounce(sh.y, sh.vy);
          bool inside = false;
          if (sh.kind == 0) inside = dx * dx + dy * dy <= sh.radius * sh.radius;
          if (sh.kind == 1) inside = std::abs(dx) <= sh.radius && std::abs(dy) <= sh.radius;
          if (sh.kind == 2) {
            const float r = std::sqrt(dx * dx + dy * dy);
            inside = r <= sh.radius && r >= 0.6f * sh.radius;
          }
          if (inside) {
            for (int c = 0; c < 3; ++c) px[c] = sh.rgb[c];
          }
        }
        for (int c = 0; c < 3; ++c) {
          p[((static_cast<std::int64_t>(c) * T + t) * H + y) * W + x] =
              clamp01(px[c]) * 2.0f - 1.0f;
        }
      }
    }
  }
  return out;
}

torch::Tensor SyntheticClips::batch(const std::vector<std::int64_t>& indices) const {
  std::vector<torch::Tensor> clips;
  clips.reserve(indices.size());
  for (auto i : indices) clips.push_back(clip(i));
  return torch::stack(clips);
}

}  // namespace tb::trainer::data
