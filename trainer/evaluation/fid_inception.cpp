#include "trainer/evaluation/fid_inception.h"

#include "trainer/evaluation/reference_weights.h"
#include "trainer/weights/state_dict_io.h"

#include <array>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tb::trainer::metrics {
namespace {

namespace F = torch::nn::functional;

// Conv (no bias), BatchNorm (eps 0.001), ReLU; registered as "conv" and "bn".
class BasicConv2dImpl : public torch::nn::Module {
 public:
  BasicConv2dImpl(int64_t in, int64_t out, std::array<int64_t, 2> kernel,
                  std::array<int64_t, 2> stride = {1, 1}, std::array<int64_t, 2> padding = {0, 0})
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                                           .stride(stride)
                                                           .padding(padding)
                                                           .bias(false)))),
        bn(register_module(
            "bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001)))) {}
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(bn(conv(x))); }

 private:
  torch::nn::Conv2d conv;
  torch::nn::BatchNorm2d bn;
};
TORCH_MODULE(BasicConv2d);

BasicConv2d square(int64_t in, int64_t out, int64_t k, int64_t stride = 1, int64_t padding = 0) {
  return BasicConv2d(in, out, std::array<int64_t, 2>{k, k}, std::array<int64_t, 2>{stride, stride},
                     std::array<int64_t, 2>{padding, padding});
}
// A (1, k) or (k, 1) convolution padded to keep the size.
BasicConv2d row(int64_t in, int64_t out, int64_t k) {
  return BasicConv2d(in, out, std::array<int64_t, 2>{1, k}, std::array<int64_t, 2>{1, 1},
                     std::array<int64_t, 2>{0, k / 2});
}
BasicConv2d column(int64_t in, int64_t out, int64_t k) {
  return BasicConv2d(in, out, std::array<int64_t, 2>{k, 1}, std::array<int64_t, 2>{1, 1},
                     std::array<int64_t, 2>{k / 2, 0});
}

// pytorch-fid's pool branches: 3x3 average over the valid pixels only.
torch::Tensor averagePool(const torch::Tensor& x) {
  return F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1).count_include_pad(false));
}
torch::Tensor maxPool(const torch::Tensor& x, int64_t stride, int64_t padding = 0) {
  return F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(stride).padding(padding));
}

// Mixed_5b/5c/5d.
class InceptionAImpl : public torch::nn::Module {
 public:
  InceptionAImpl(int64_t in, int64_t pool_features)
      : b1(register_module("branch1x1", square(in, 64, 1))),
        b5_1(register_module("branch5x5_1", square(in, 48, 1))),
        b5_2(register_module("branch5x5_2", square(48, 64, 5, 1, 2))),
        b3_1(register_module("branch3x3dbl_1", square(in, 64, 1))),
        b3_2(register_module("branch3x3dbl_2", square(64, 96, 3, 1, 1))),
        b3_3(register_module("branch3x3dbl_3", square(96, 96, 3, 1, 1))),
        pool(register_module("branch_pool", square(in, pool_features, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b1(x), b5_2(b5_1(x)), b3_3(b3_2(b3_1(x))), pool(averagePool(x))}, 1);
  }

 private:
  BasicConv2d b1, b5_1, b5_2, b3_1, b3_2, b3_3, pool;
};
TORCH_MODULE(InceptionA);

// Mixed_6a (torchvision's, unpatched).
class InceptionBImpl : public torch::nn::Module {
 public:
  explicit InceptionBImpl(int64_t in)
      : b3(register_module("branch3x3", square(in, 384, 3, 2))),
        d1(register_module("branch3x3dbl_1", square(in, 64, 1))),
        d2(register_module("branch3x3dbl_2", square(64, 96, 3, 1, 1))),
        d3(register_module("branch3x3dbl_3", square(96, 96, 3, 2))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b3(x), d3(d2(d1(x))), maxPool(x, 2)}, 1);
  }

 private:
  BasicConv2d b3, d1, d2, d3;
};
TORCH_MODULE(InceptionB);

// Mixed_6b..6e.
class InceptionCImpl : public torch::nn::Module {
 public:
  InceptionCImpl(int64_t in, int64_t c7)
      : b1(register_module("branch1x1", square(in, 192, 1))),
        s1(register_module("branch7x7_1", square(in, c7, 1))),
        s2(register_module("branch7x7_2", row(c7, c7, 7))),
        s3(register_module("branch7x7_3", column(c7, 192, 7))),
        d1(register_module("branch7x7dbl_1", square(in, c7, 1))),
        d2(register_module("branch7x7dbl_2", column(c7, c7, 7))),
        d3(register_module("branch7x7dbl_3", row(c7, c7, 7))),
        d4(register_module("branch7x7dbl_4", column(c7, c7, 7))),
        d5(register_module("branch7x7dbl_5", row(c7, 192, 7))),
        pool(register_module("branch_pool", square(in, 192, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b1(x), s3(s2(s1(x))), d5(d4(d3(d2(d1(x))))), pool(averagePool(x))}, 1);
  }

 private:
  BasicConv2d b1, s1, s2, s3, d1, d2, d3, d4, d5, pool;
};
TORCH_MODULE(InceptionC);

// Mixed_7a (torchvision's, unpatched).
class InceptionDImpl : public torch::nn::Module {
 public:
  explicit InceptionDImpl(int64_t in)
      : t1(register_module("branch3x3_1", square(in, 192, 1))),
        t2(register_module("branch3x3_2", square(192, 320, 3, 2))),
        s1(register_module("branch7x7x3_1", square(in, 192, 1))),
        s2(register_module("branch7x7x3_2", row(192, 192, 7))),
        s3(register_module("branch7x7x3_3", column(192, 192, 7))),
        s4(register_module("branch7x7x3_4", square(192, 192, 3, 2))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({t2(t1(x)), s4(s3(s2(s1(x)))), maxPool(x, 2)}, 1);
  }

 private:
  BasicConv2d t1, t2, s1, s2, s3, s4;
};
TORCH_MODULE(InceptionD);

// Mixed_7b (average pool over valid pixels) and Mixed_7c (max pool), pytorch-fid's two patches.
class InceptionEImpl : public torch::nn::Module {
 public:
  InceptionEImpl(int64_t in, bool max_pool_branch)
      : max_pool_branch_(max_pool_branch),
        b1(register_module("branch1x1", square(in, 320, 1))),
        t1(register_module("branch3x3_1", square(in, 384, 1))),
        t2a(register_module("branch3x3_2a", row(384, 384, 3))),
        t2b(register_module("branch3x3_2b", column(384, 384, 3))),
        d1(register_module("branch3x3dbl_1", square(in, 448, 1))),
        d2(register_module("branch3x3dbl_2", square(448, 384, 3, 1, 1))),
        d3a(register_module("branch3x3dbl_3a", row(384, 384, 3))),
        d3b(register_module("branch3x3dbl_3b", column(384, 384, 3))),
        pool(register_module("branch_pool", square(in, 192, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor t = t1(x);
    const torch::Tensor d = d2(d1(x));
    const torch::Tensor pooled = max_pool_branch_ ? maxPool(x, 1, 1) : averagePool(x);
    return torch::cat(
        {b1(x), torch::cat({t2a(t), t2b(t)}, 1), torch::cat({d3a(d), d3b(d)}, 1), pool(pooled)}, 1);
  }

 private:
  bool max_pool_branch_;
  BasicConv2d b1, t1, t2a, t2b, d1, d2, d3a, d3b, pool;
};
TORCH_MODULE(InceptionE);

}  // namespace

// The layers, registered under the reference's top-level names.
struct FidInceptionImpl::Layers {
  BasicConv2d conv1a{nullptr}, conv2a{nullptr}, conv2b{nullptr}, conv3b{nullptr}, conv4a{nullptr};
  InceptionA mixed5b{nullptr}, mixed5c{nullptr}, mixed5d{nullptr};
  InceptionB mixed6a{nullptr};
  InceptionC mixed6b{nullptr}, mixed6c{nullptr}, mixed6d{nullptr}, mixed6e{nullptr};
  InceptionD mixed7a{nullptr};
  InceptionE mixed7b{nullptr}, mixed7c{nullptr};
};

FidInceptionImpl::FidInceptionImpl() : m_layers(std::make_shared<Layers>()) {
  Layers& l = *m_layers;
  l.conv1a = register_module("Conv2d_1a_3x3", square(3, 32, 3, 2));
  l.conv2a = register_module("Conv2d_2a_3x3", square(32, 32, 3));
  l.conv2b = register_module("Conv2d_2b_3x3", square(32, 64, 3, 1, 1));
  l.conv3b = register_module("Conv2d_3b_1x1", square(64, 80, 1));
  l.conv4a = register_module("Conv2d_4a_3x3", square(80, 192, 3));
  l.mixed5b = register_module("Mixed_5b", InceptionA(192, 32));
  l.mixed5c = register_module("Mixed_5c", InceptionA(256, 64));
  l.mixed5d = register_module("Mixed_5d", InceptionA(288, 64));
  l.mixed6a = register_module("Mixed_6a", InceptionB(288));
  l.mixed6b = register_module("Mixed_6b", InceptionC(768, 128));
  l.mixed6c = register_module("Mixed_6c", InceptionC(768, 160));
  l.mixed6d = register_module("Mixed_6d", InceptionC(768, 160));
  l.mixed6e = register_module("Mixed_6e", InceptionC(768, 192));
  l.mixed7a = register_module("Mixed_7a", InceptionD(768));
  l.mixed7b = register_module("Mixed_7b", InceptionE(1280, false));
  l.mixed7c = register_module("Mixed_7c", InceptionE(2048, true));
  register_module("fc", torch::nn::Linear(2048, 1008));  // in the weight file, not in pool3
  for (auto& p : parameters()) p.set_requires_grad(false);
  eval();
}

torch::Tensor FidInceptionImpl::preprocess(const torch::Tensor& images) {
  if (images.dim() != 4 || images.size(1) != 3) {
    throw std::invalid_argument("FID Inception: images of shape " +
                                weights::shapeText(images.sizes()) + ", expected [B, 3, H, W]");
  }
  const torch::Tensor resized =
      F::interpolate(images.to(torch::kFloat32), F::InterpolateFuncOptions()
                                                     .size(std::vector<int64_t>{299, 299})
                                                     .mode(torch::kBilinear)
                                                     .align_corners(false));
  return resized * 2 - 1;
}

torch::Tensor FidInceptionImpl::block(int index, const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  Layers& l = *m_layers;
  switch (index) {
    case 0:
      return maxPool(l.conv2b(l.conv2a(l.conv1a(input))), 2);
    case 1:
      return maxPool(l.conv4a(l.conv3b(input)), 2);
    case 2:
      return l.mixed6e(
          l.mixed6d(l.mixed6c(l.mixed6b(l.mixed6a(l.mixed5d(l.mixed5c(l.mixed5b(input))))))));
    case 3:
      return F::adaptive_avg_pool2d(l.mixed7c(l.mixed7b(l.mixed7a(input))),
                                    F::AdaptiveAvgPool2dFuncOptions(1))
          .flatten(1);
    default:
      throw std::invalid_argument("FID Inception: no block " + std::to_string(index));
  }
}

torch::Tensor FidInceptionImpl::forward(const torch::Tensor& images) {
  torch::Tensor x = preprocess(images);
  for (int b = 0; b < 4; ++b) x = block(b, x);
  return x;
}

void FidInceptionImpl::loadWeights(const std::string& path) {
  loadReferenceWeights(*this, path, "the FID InceptionV3");
}

}  // namespace tb::trainer::metrics
