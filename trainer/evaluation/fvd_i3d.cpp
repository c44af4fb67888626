#include "trainer/evaluation/fvd_i3d.h"

#include "trainer/evaluation/reference_weights.h"
#include "trainer/weights/state_dict_io.h"

#include <array>
#include <stdexcept>

namespace tb::trainer::metrics {
namespace {

namespace F = torch::nn::functional;
using Triple = std::array<int64_t, 3>;

// TensorFlow's "SAME" padding of `x` [B, C, T, H, W] for a window `kernel` moved by `stride`:
// per axis max(k - s, 0) when the size divides by s, else max(k - size % s, 0), the smaller half
// in front.
torch::Tensor padSame(const torch::Tensor& x, const Triple& kernel, const Triple& stride) {
  std::vector<int64_t> pads(6);  // F::pad's order: W front, W back, H ..., T ...
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t size = x.size(2 + axis);
    const int64_t k = kernel[axis], s = stride[axis];
    const int64_t pad =
        size % s == 0 ? std::max<int64_t>(k - s, 0) : std::max<int64_t>(k - size % s, 0);
    pads[2 * (2 - axis)] = pad / 2;
    pads[2 * (2 - axis) + 1] = pad - pad / 2;
  }
  return F::pad(x, F::PadFuncOptions(pads));
}

torch::Tensor maxPoolSame(const torch::Tensor& x, const Triple& kernel, const Triple& stride) {
  return F::max_pool3d(padSame(x, kernel, stride), F::MaxPool3dFuncOptions(kernel).stride(stride));
}

// SAME-padded conv3d (no bias), BatchNorm (eps 1e-5), ReLU; registered as "conv3d" and "bn". The
// head's `logits` is the variant with a bias and neither BatchNorm nor ReLU.
class Unit3DImpl : public torch::nn::Module {
 public:
  Unit3DImpl(int64_t in, int64_t out, Triple kernel, Triple stride = {1, 1, 1}, bool head = false)
      : kernel_(kernel), stride_(stride), head_(head) {
    conv = register_module(
        "conv3d",
        torch::nn::Conv3d(torch::nn::Conv3dOptions(in, out, kernel).stride(stride).bias(head)));
    if (!head)
      bn = register_module("bn",
                           torch::nn::BatchNorm3d(torch::nn::BatchNorm3dOptions(out).eps(1e-5)));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor y = conv(padSame(x, kernel_, stride_));
    return head_ ? y : torch::relu(bn(y));
  }

 private:
  Triple kernel_, stride_;
  bool head_;
  torch::nn::Conv3d conv{nullptr};
  torch::nn::BatchNorm3d bn{nullptr};
};
TORCH_MODULE(Unit3D);

Unit3D unit(int64_t in, int64_t out, int64_t k, int64_t stride = 1) {
  return Unit3D(in, out, Triple{k, k, k}, Triple{stride, stride, stride});
}

// A Mixed block: widths {b0, b1a, b1b, b2a, b2b, b3b}; branches concatenated b0, b1, b2, b3.
class InceptionModuleImpl : public torch::nn::Module {
 public:
  InceptionModuleImpl(int64_t in, const std::array<int64_t, 6>& w)
      : b0(register_module("b0", unit(in, w[0], 1))),
        b1a(register_module("b1a", unit(in, w[1], 1))),
        b1b(register_module("b1b", unit(w[1], w[2], 3))),
        b2a(register_module("b2a", unit(in, w[3], 1))),
        b2b(register_module("b2b", unit(w[3], w[4], 3))),
        b3b(register_module("b3b", unit(in, w[5], 1))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b0(x), b1b(b1a(x)), b2b(b2a(x)), b3b(maxPoolSame(x, {3, 3, 3}, {1, 1, 1}))},
                      1);
  }
  int64_t outChannels() const {
    return b0->named_parameters()["conv3d.weight"].size(0) +
           b1b->named_parameters()["conv3d.weight"].size(0) +
           b2b->named_parameters()["conv3d.weight"].size(0) +
           b3b->named_parameters()["conv3d.weight"].size(0);
  }

 private:
  Unit3D b0, b1a, b1b, b2a, b2b, b3b;
};
TORCH_MODULE(InceptionModule);

}  // namespace

struct FvdI3dImpl::Layers {
  Unit3D conv1a{nullptr}, conv2b{nullptr}, conv2c{nullptr}, logits{nullptr};
  std::vector<std::pair<std::string, InceptionModule>> mixed;  // in forward order
};

FvdI3dImpl::FvdI3dImpl() : m_layers(std::make_shared<Layers>()) {
  Layers& l = *m_layers;
  l.logits = register_module("logits", Unit3D(1024, 400, Triple{1, 1, 1}, Triple{1, 1, 1}, true));
  l.conv1a = register_module("Conv3d_1a_7x7", unit(3, 64, 7, 2));
  l.conv2b = register_module("Conv3d_2b_1x1", unit(64, 64, 1));
  l.conv2c = register_module("Conv3d_2c_3x3", unit(64, 192, 3));
  const std::vector<std::pair<std::string, std::array<int64_t, 6>>> widths = {
      {"Mixed_3b", {64, 96, 128, 16, 32, 32}},     {"Mixed_3c", {128, 128, 192, 32, 96, 64}},
      {"Mixed_4b", {192, 96, 208, 16, 48, 64}},    {"Mixed_4c", {160, 112, 224, 24, 64, 64}},
      {"Mixed_4d", {128, 128, 256, 24, 64, 64}},   {"Mixed_4e", {112, 144, 288, 32, 64, 64}},
      {"Mixed_4f", {256, 160, 320, 32, 128, 128}}, {"Mixed_5b", {256, 160, 320, 32, 128, 128}},
      {"Mixed_5c", {384, 192, 384, 48, 128, 128}}};
  int64_t channels = 192;
  for (const auto& [name, w] : widths) {
    InceptionModule block = register_module(name, InceptionModule(channels, w));
    channels = block->outChannels();
    l.mixed.emplace_back(name, block);
  }
  for (auto& p : parameters()) p.set_requires_grad(false);
  eval();
}

void FvdI3dImpl::loadWeights(const std::string& path) {
  loadReferenceWeights(*this, path, "the FVD I3D");
}

torch::Tensor FvdI3dImpl::preprocess(const torch::Tensor& clips) {
  if (clips.dim() != 5 || clips.size(4) != 3 || clips.scalar_type() != torch::kUInt8) {
    throw std::invalid_argument("FVD I3D: clips of shape " + weights::shapeText(clips.sizes()) +
                                " (" + std::string(c10::toString(clips.scalar_type())) +
                                "), expected uint8 [B, T, H, W, 3]");
  }
  if (clips.size(1) < kFvdMinFrames) {
    throw std::invalid_argument("FVD I3D: clips of " + std::to_string(clips.size(1)) +
                                " frames; the I3D needs at least " + std::to_string(kFvdMinFrames));
  }
  const int64_t b = clips.size(0), t = clips.size(1);
  const torch::Tensor frames = clips.to(torch::kFloat32)
                                   .reshape({b * t, clips.size(2), clips.size(3), 3})
                                   .permute({0, 3, 1, 2});
  const torch::Tensor resized = F::interpolate(frames, F::InterpolateFuncOptions()
                                                           .size(std::vector<int64_t>{224, 224})
                                                           .mode(torch::kBilinear)
                                                           .align_corners(false));
  return (resized * 2 / 255 - 1).reshape({b, t, 3, 224, 224}).permute({0, 2, 1, 3, 4}).contiguous();
}

std::vector<std::pair<std::string, torch::Tensor>> FvdI3dImpl::endpoints(
    const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  Layers& l = *m_layers;
  std::vector<std::pair<std::string, torch::Tensor>> out;
  torch::Tensor x = input;
  const auto keep = [&](const std::string& name, torch::Tensor value) {
    x = std::move(value);
    out.emplace_back(name, x);
  };
  keep("Conv3d_1a_7x7", l.conv1a(x));
  keep("MaxPool3d_2a_3x3", maxPoolSame(x, {1, 3, 3}, {1, 2, 2}));
  keep("Conv3d_2b_1x1", l.conv2b(x));
  keep("Conv3d_2c_3x3", l.conv2c(x));
  keep("MaxPool3d_3a_3x3", maxPoolSame(x, {1, 3, 3}, {1, 2, 2}));
  for (auto& [name, block] : l.mixed) {
    if (name == "Mixed_4b") keep("MaxPool3d_4a_3x3", maxPoolSame(x, {3, 3, 3}, {2, 2, 2}));
    if (name == "Mixed_5b") keep("MaxPool3d_5a_2x2", maxPoolSame(x, {2, 2, 2}, {2, 2, 2}));
    keep(name, block(x));
  }
  const torch::Tensor pooled = F::avg_pool3d(x, F::AvgPool3dFuncOptions({2, 7, 7}).stride(1));
  out.emplace_back("logits_per_t", l.logits(pooled).squeeze(4).squeeze(3));
  return out;
}

torch::Tensor FvdI3dImpl::forward(const torch::Tensor& clips) {
  return endpoints(preprocess(clips)).back().second.mean(2);
}

}  // namespace tb::trainer::metrics
