#pragma once
// Checks a reduced-precision convolution (bf16, fp16) against fp32 at the shapes a model really
// runs. Convolution libraries have returned silently wrong reduced-precision results for some
// shapes only: cuDNN 9.10 for large bf16 Conv3d inputs (pytorch issue 163539), oneDNN's AMX bf16
// Conv3d when the innermost output width is 1 with a stride over 1 (pytorch issue 169688). A
// training run cannot tell such a result from a bad hyperparameter, so `bench --what conv-check`
// runs every shape of a configuration through this before a GPU is trusted with it.

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tb::trainer {

/// One aten::convolution as a model called it: shapes and arguments, not values.
struct ConvolutionShape {
  std::vector<std::int64_t> input;  ///< [B, C, (T,) H, W]
  std::vector<std::int64_t>
      weight;  ///< [C_out, C_in / groups, (kT,) kH, kW] (transposed: [C_in, ...])
  std::vector<std::int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  std::int64_t groups = 1;

  bool operator==(const ConvolutionShape& o) const;
  /// "[1, 64, 17, 128, 128] * [64, 64, 3, 3, 3] stride [1, 1, 1] padding [0, 0, 0]"
  std::string describe() const;
};

/// The distinct convolutions `body` runs (on any thread), in the order first seen.
std::vector<ConvolutionShape> recordConvolutions(const std::function<void()>& body);

/// Relative L2 errors ||low - fp32|| / ||fp32|| of one convolution's output and of its input and
/// weight gradients.
struct ConvolutionErrors {
  double output = 0, grad_input = 0, grad_weight = 0;
  double worst() const;
};

/// A convolution at the given arguments: what is checked (the default is at::convolution).
using ConvolutionFn = std::function<torch::Tensor(
    const torch::Tensor& input, const torch::Tensor& weight, const ConvolutionShape& shape)>;
torch::Tensor convolve(const torch::Tensor& input, const torch::Tensor& weight,
                       const ConvolutionShape& shape);

/// Runs `shape` forward and backward on `device` at `dtype` and in fp32 (TF32 off for the
/// duration, so the reference is true fp32) from the same random values, rounded to `dtype`
/// first so that only the computation differs, and returns the errors. A correct bf16
/// convolution stays near bf16's output rounding (about 2e-3); a wrong kernel gives errors of
/// order 1.
ConvolutionErrors compareWithFp32(const ConvolutionShape& shape, const torch::Device& device,
                                  at::ScalarType dtype, std::uint64_t seed,
                                  const ConvolutionFn& low = convolve);

/// The largest relative error a correct kernel gives at `dtype` (bf16 and fp16: 2e-2, ten times
/// their usual error: accumulation order varies with the algorithm).
double convolutionTolerance(at::ScalarType dtype);

}  // namespace tb::trainer
