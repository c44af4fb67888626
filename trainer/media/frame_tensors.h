#pragma once
// The one torch-facing file of trainer/media: VideoFrames <-> clip tensors for the models.

#include "trainer/media/video_frames.h"

#include <torch/torch.h>

namespace tb::trainer::media {

/// `[3, T, H, W]` float32 in [-1, 1] (v / 127.5 - 1), the layout the tokenizers take per clip
/// (see data::SyntheticClips). A still image gives T = 1. The tensor owns its memory.
torch::Tensor framesToTensor(const VideoFrames& frames);
/// The same from bytes laid out as VideoFrames::rgb, [count, height, width, 3] uint8 (a clip in
/// a mapped shard); they are read once, never written, and the tensor owns its own copy.
torch::Tensor framesToTensor(const std::uint8_t* rgb, int count, int height, int width);

/// `[T, H, W, 3]` uint8, the frames as they are (what the rFID and rFVD feature networks take);
/// the tensor owns its copy.
torch::Tensor framesToBytes(const VideoFrames& frames);

/// The inverse, for `[3, T, H, W]` or `[3, H, W]` (one frame) float tensors on any device:
/// clamps to [-1, 1], maps to [0, 255] and rounds. Throws std::invalid_argument on other shapes.
VideoFrames tensorToFrames(const torch::Tensor& clip, double fps = 0.0);

}  // namespace tb::trainer::media
