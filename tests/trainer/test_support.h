#pragma once
// Helpers shared by the trainer tests: scratch folders and synthetic frames.

#include "trainer/media/video_frames.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include <unistd.h>

namespace tb::trainer::testing {

/// A fresh folder per test under the system temp folder, removed afterwards.
class TempFolder {
 public:
  TempFolder() {
    static std::atomic<int> counter{0};
    m_path = std::filesystem::temp_directory_path() /
             ("tb_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)));
    std::filesystem::remove_all(m_path);
    std::filesystem::create_directories(m_path);
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  std::string file(const std::string& name) const { return (m_path / name).string(); }
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// Smooth, moving content: every frame differs from the others, nothing aliases at 32x24.
inline media::VideoFrames makeClip(int width, int height, int count, double fps) {
  media::VideoFrames clip;
  clip.width = width;
  clip.height = height;
  clip.count = count;
  clip.fps = fps;
  clip.rgb.resize(clip.frameBytes() * count);
  for (int t = 0; t < count; ++t)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        uint8_t* p = clip.frame(t) + (static_cast<std::size_t>(y) * width + x) * 3;
        p[0] = static_cast<uint8_t>(30 + 4 * x + 3 * t);
        p[1] = static_cast<uint8_t>(30 + 6 * y + 2 * t);
        p[2] = static_cast<uint8_t>(128 + 60 * std::sin((x + y + 2.0 * t) / 6.0));
      }
  return clip;
}

}  // namespace tb::trainer::testing
