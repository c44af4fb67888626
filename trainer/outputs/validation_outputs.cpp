#include "trainer/outputs/validation_outputs.h"

#include "trainer/media/frame_tensors.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif
#include "trainer/weights/state_dict_io.h"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace tb::trainer::outputs {

namespace fs = std::filesystem;

void writeCodebookCounts(const fs::path& file, std::int64_t step,
                         const std::vector<std::int64_t>& counts) {
  fs::create_directories(file.parent_path());
  const torch::Tensor t =
      torch::from_blob(const_cast<std::int64_t*>(counts.data()),
                       {static_cast<std::int64_t>(counts.size())}, torch::kInt64);
  weights::saveTensors({{"counts", t.clone()}}, file, {{"step", std::to_string(step)}});
}

torch::Tensor sampleRow(const torch::Tensor& clip, const torch::Tensor& recon) {
  return torch::cat({clip.to(torch::kCPU), recon.clamp(-1, 1).to(torch::kCPU)}, 3);
}

std::vector<std::uint8_t> writeSampleGif(const fs::path& file, const torch::Tensor& grid,
                                         int* width, int* height) {
#if TB_WITH_FFMPEG
  fs::create_directories(file.parent_path());
  const media::VideoFrames frames = media::tensorToFrames(grid, 8.0);
  media::writeVideo(file.string(), frames);
  *width = frames.width;
  *height = frames.height;
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
#else
  (void)grid, (void)width, (void)height;
  throw std::runtime_error("cannot write " + file.string() + ": this build has no FFmpeg");
#endif
}

}  // namespace tb::trainer::outputs
