#include "trainer/media/frame_tensors.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace tb::trainer::media {

torch::Tensor framesToTensor(const VideoFrames& frames) {
  if (!frames.consistent())
    throw std::invalid_argument(
        "framesToTensor: rgb size does not match count x height x width x 3");
  return framesToTensor(frames.rgb.data(), frames.count, frames.height, frames.width);
}

torch::Tensor framesToTensor(const std::uint8_t* rgb, int count, int height, int width) {
  // from_blob only reads here: the float conversion copies before anything could write.
  const torch::Tensor bytes =
      torch::from_blob(const_cast<uint8_t*>(rgb), {count, height, width, 3}, torch::kUInt8);
  return bytes.permute({3, 0, 1, 2}).to(torch::kFloat32).div_(127.5).sub_(1.0).contiguous();
}

torch::Tensor framesToBytes(const VideoFrames& frames) {
  if (!frames.consistent())
    throw std::invalid_argument(
        "framesToBytes: rgb size does not match count x height x width x 3");
  return torch::from_blob(const_cast<std::uint8_t*>(frames.rgb.data()),
                          {frames.count, frames.height, frames.width, 3}, torch::kUInt8)
      .clone();
}

VideoFrames tensorToFrames(const torch::Tensor& clip, double fps) {
  torch::Tensor t = clip.detach();
  if (t.dim() == 3) t = t.unsqueeze(1);
  if (t.dim() != 4 || t.size(0) != 3)
    throw std::invalid_argument("tensorToFrames: expected [3, T, H, W] or [3, H, W], got " +
                                std::to_string(clip.dim()) + "-D tensor with " +
                                std::to_string(clip.dim() > 0 ? clip.size(0) : 0) + " channels");
  const torch::Tensor bytes = t.to(torch::kCPU, torch::kFloat32)
                                  .clamp(-1.0, 1.0)
                                  .add(1.0)
                                  .mul(127.5)
                                  .round()
                                  .to(torch::kUInt8)
                                  .permute({1, 2, 3, 0})
                                  .contiguous();
  VideoFrames frames;
  frames.count = static_cast<int>(bytes.size(0));
  frames.height = static_cast<int>(bytes.size(1));
  frames.width = static_cast<int>(bytes.size(2));
  frames.fps = fps;
  frames.rgb.resize(frames.frameBytes() * frames.count);
  if (!frames.rgb.empty())
    std::memcpy(frames.rgb.data(), bytes.data_ptr<uint8_t>(), frames.rgb.size());
  return frames;
}

}  // namespace tb::trainer::media
