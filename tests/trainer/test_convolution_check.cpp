// The reduced-precision convolution check (bench --what conv-check): it records the convolutions
// a body runs, and tells a correct bf16 convolution from a wrong one.
#include "trainer/convolution_check.h"

#include <gtest/gtest.h>

namespace tb::trainer {

void PrintTo(const ConvolutionShape& shape, std::ostream* os) { *os << shape.describe(); }

namespace {

ConvolutionShape shapeOf(std::vector<std::int64_t> input, std::vector<std::int64_t> weight,
                         std::int64_t stride, bool transposed = false, std::int64_t groups = 1) {
  ConvolutionShape s;
  const std::size_t dims = input.size() - 2;
  s.input = std::move(input);
  s.weight = std::move(weight);
  s.stride.assign(dims, stride);
  s.padding.assign(dims, 1);
  s.dilation.assign(dims, 1);
  s.output_padding.assign(dims, transposed ? stride - 1 : 0);
  s.transposed = transposed;
  s.groups = groups;
  return s;
}

TEST(ConvolutionCheck, RecordsEachDistinctConvolutionOnce) {
  const torch::Tensor x3 = torch::randn({2, 4, 5, 8, 8});
  const torch::Tensor w3 = torch::randn({6, 4, 3, 3, 3});
  const torch::Tensor x2 = torch::randn({1, 3, 16, 16});
  const torch::Tensor w2 = torch::randn({8, 3, 3, 3});
  const auto shapes = recordConvolutions([&] {
    (void)torch::conv3d(x3, w3, {}, 2, 1);
    (void)torch::conv3d(x3, w3, {}, 2, 1);  // the same again: recorded once
    (void)torch::conv2d(x2, w2, {}, 1, 1);
    (void)torch::matmul(x2, x2);  // not a convolution
  });
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0], shapeOf({2, 4, 5, 8, 8}, {6, 4, 3, 3, 3}, 2));
  EXPECT_EQ(shapes[1], shapeOf({1, 3, 16, 16}, {8, 3, 3, 3}, 1));
  EXPECT_EQ(shapes[0].describe(),
            "[2, 4, 5, 8, 8] * [6, 4, 3, 3, 3] stride [2, 2, 2] padding [1, 1, 1]");
  // Nothing is recorded once the body has returned.
  (void)torch::conv2d(x2, w2);
  EXPECT_EQ(shapes.size(), 2u);
}

TEST(ConvolutionCheck, CorrectBf16ConvolutionsAreNearFp32) {
  // Shapes both LibTorch versions compute correctly on the CPU in bf16 (Debian's 1.13 gives NaN
  // weight gradients for some strided Conv3d and fails transposed ones: see docs/gpu.md).
  for (const ConvolutionShape& s : {shapeOf({2, 8, 5, 12, 12}, {16, 8, 3, 3, 3}, 1),
                                    shapeOf({2, 8, 16, 16}, {8, 4, 3, 3}, 1, false, 2),
                                    shapeOf({1, 8, 16, 16}, {16, 8, 3, 3}, 2)}) {
    const ConvolutionErrors e = compareWithFp32(s, torch::kCPU, at::kBFloat16, 7);
    EXPECT_LE(e.worst(), convolutionTolerance(at::kBFloat16)) << s.describe();
    // bf16 really ran: its output rounding alone is about 2^-9 relative.
    EXPECT_GT(e.output, 1e-4) << s.describe();
    EXPECT_GT(e.grad_input, 1e-4) << s.describe();
    EXPECT_GT(e.grad_weight, 1e-4) << s.describe();
  }
}

TEST(ConvolutionCheck, AWrongConvolutionIsCaught) {
  const ConvolutionShape s = shapeOf({2, 8, 5, 12, 12}, {16, 8, 3, 3, 3}, 1);
  // One output channel in sixteen lost, as a broken kernel might.
  const ConvolutionFn wrong = [](const torch::Tensor& input, const torch::Tensor& weight,
                                 const ConvolutionShape& shape) {
    const torch::Tensor y = convolve(input, weight, shape);
    torch::Tensor keep = torch::ones({1, y.size(1), 1, 1, 1}, y.options());
    keep.narrow(1, y.size(1) - 1, 1).zero_();
    return y * keep;
  };
  const ConvolutionErrors e = compareWithFp32(s, torch::kCPU, at::kBFloat16, 7, wrong);
  EXPECT_GT(e.output, convolutionTolerance(at::kBFloat16));
  EXPECT_GT(e.grad_input, convolutionTolerance(at::kBFloat16));
  EXPECT_GT(e.grad_weight, convolutionTolerance(at::kBFloat16));
}

}  // namespace
}  // namespace tb::trainer
