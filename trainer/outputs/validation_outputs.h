#pragma once
// What a validation leaves in the run directory for the window: the code-use histogram and the
// sample GIF of the validation clips.

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace tb::trainer::outputs {

/// codebook/step_<N>.safetensors: `counts` (int64, one per code) under the tensor name "counts",
/// metadata "step". Throws naming the file when it cannot be written.
void writeCodebookCounts(const std::filesystem::path& file, std::int64_t step,
                         const std::vector<std::int64_t>& counts);

/// Validation rows for a sample: `clip` | `recon`, both `[3, T, H, W]` in [-1, 1], side by side
/// (the reconstruction clamped), on the CPU.
torch::Tensor sampleRow(const torch::Tensor& clip, const torch::Tensor& recon);

/// Writes `grid` `[3, T, H, W]` in [-1, 1] as an animated GIF at 8 frames/s and returns its
/// bytes (for TensorBoard). Needs FFmpeg: without it throws std::runtime_error.
std::vector<std::uint8_t> writeSampleGif(const std::filesystem::path& file,
                                         const torch::Tensor& grid, int* width, int* height);

}  // namespace tb::trainer::outputs
