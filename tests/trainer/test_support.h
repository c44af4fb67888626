#pragma once
// Helpers shared by the trainer tests: scratch folders and synthetic frames.

#include "core/event_protocol.h"
#include "core/run_directory.h"
#include "trainer/event_sink.h"
#include "trainer/media/video_frames.h"
#include "trainer/training/training_run.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>

#include <unistd.h>

namespace tb::trainer::testing {

/// A fresh folder per test under the system temp folder, removed afterwards.
/// Everything written to std::cerr while it lives.
class CapturedStderr {
 public:
  CapturedStderr() : m_old(std::cerr.rdbuf(m_text.rdbuf())) {}
  ~CapturedStderr() { std::cerr.rdbuf(m_old); }
  CapturedStderr(const CapturedStderr&) = delete;
  CapturedStderr& operator=(const CapturedStderr&) = delete;
  std::string text() const { return m_text.str(); }

 private:
  std::ostringstream m_text;
  std::streambuf* m_old;
};

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

/// A 150k-parameter MAGVIT-v2 on 16x16, 5-frame procedural clips that learns in a few dozen
/// steps (lr 3e-3, batch 2, one thread), logging every step, without validation, checkpoints,
/// perceptual or GAN losses.
inline core::RunConfig tinyConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.data.synthetic_clips = 64;
  c.data.hflip = false;
  c.model.init_dim = 16;
  c.model.max_dim = 32;
  c.model.layers = {{"residual", {}},
                    {"compress_space", {}},
                    {"residual", {}},
                    {"compress_time", {}},
                    {"residual", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 256;
  c.loss.perceptual_weight = 0;
  c.loss.adversarial_weight = 0;
  c.train.batch_size = 2;
  c.train.lr = 3e-3;
  c.train.warmup_steps = 5;
  c.train.max_steps = 40;
  c.train.log_every = 1;
  c.train.valid_every = 0;
  c.train.checkpoint_every = 0;
  c.train.threads = 1;
  c.train.ema_start_step = 10;
  c.train.ema_update_every = 1;
  return c;
}

/// `config` with the GAN on from `start_step`: a small PatchGAN (8 channels, 2 layers) at loss
/// weight 0.5.
inline core::RunConfig withTinyGan(core::RunConfig config, int start_step) {
  config.loss.adversarial_weight = 0.5;
  config.loss.discr_start_step = start_step;
  config.model.discriminator.type = core::DiscriminatorType::PatchGan;
  config.model.discriminator.dim = 8;
  config.model.discriminator.patchgan_layers = 2;
  return config;
}

/// A training run's exit code and the protocol events it emitted, one line each.
struct RunResult {
  int code;
  std::vector<std::string> events;
};

/// Trains `config` into `dir` in this process with `options`, collecting the events from a file
/// beside `dir`.
inline RunResult train(const core::RunConfig& config, const std::filesystem::path& dir,
                       const TrainOptions& options) {
  const std::filesystem::path events_file = dir.string() + ".events";
  const int fd = ::open(events_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EventSink sink(fd);
  RunControl control;
  const int code = runTraining(config, core::RunDirectory(dir), options, sink, control);
  ::close(fd);
  std::ifstream in(events_file);
  RunResult result{code, {}};
  for (std::string line; std::getline(in, line);) result.events.push_back(line);
  std::filesystem::remove(events_file);
  return result;
}

/// A run folder name in the temporary directory, unique to this process, removed if present.
inline std::filesystem::path freshDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tb_training_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

/// "code: message" of the run's error event, or "" when it emitted none.
inline std::string errorEventOf(const RunResult& r) {
  for (const auto& line : r.events) {
    const auto decoded = core::decodeEventLine(line);
    if (!decoded.ok()) continue;
    if (const auto* e = std::get_if<core::ErrorEvent>(decoded.event()))
      return e->code + ": " + e->message;
  }
  return "";
}

/// Trains `config` into `dir` in this process, afresh or resuming.
inline RunResult train(const core::RunConfig& config, const std::filesystem::path& dir,
                       bool resume = false) {
  TrainOptions options;
  options.resume = resume;
  return train(config, dir, options);
}

}  // namespace tb::trainer::testing
