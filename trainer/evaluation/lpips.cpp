#include "trainer/evaluation/lpips.h"

#include "core/config_io.h"
#include "trainer/evaluation/image_metrics.h"
#include "trainer/torch_compat.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace tb::trainer::metrics {
namespace {

constexpr double kNormEps = 1e-10;  // lpips.normalize_tensor

struct ConvSpec {
  int64_t in, out, kernel, stride, padding;
};

/// One entry of torchvision's `features`: a conv (followed by its ReLU entry) or a max pool.
struct LayerSpec {
  enum class Kind { Conv, Relu, Pool } kind;
  ConvSpec conv{};
  int64_t pool_kernel = 0, pool_stride = 0;
};

std::vector<LayerSpec> featureLayout(LpipsNet net) {
  using K = LayerSpec::Kind;
  std::vector<LayerSpec> layers;
  auto conv = [&](ConvSpec c) {
    layers.push_back({K::Conv, c});
    layers.push_back({K::Relu});
  };
  auto pool = [&](int64_t k, int64_t s) { layers.push_back({K::Pool, {}, k, s}); };
  if (net == LpipsNet::Alex) {
    conv({3, 64, 11, 4, 2});
    pool(3, 2);
    conv({64, 192, 5, 1, 2});
    pool(3, 2);
    conv({192, 384, 3, 1, 1});
    conv({384, 256, 3, 1, 1});
    conv({256, 256, 3, 1, 1});  // index 11 is the last tap; the final pool is not needed
  } else {
    const int64_t widths[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                              0,  512, 512, 512, 0,   512, 512, 512};
    int64_t in = 3;
    for (int64_t w : widths) {
      if (w == 0) {
        pool(2, 2);
      } else {
        conv({in, w, 3, 1, 1});
        in = w;
      }
    }
  }
  return layers;
}

std::string shapeText(torch::IntArrayRef sizes) {
  std::ostringstream s;
  s << sizes;
  return s.str();
}

// VGG16's features, the largest backbone LPIPS uses, take 59 MB; a file 16 times that is no
// weight file, and reading it whole could exhaust memory.
constexpr std::uintmax_t kMaxWeightFileBytes = std::uintmax_t{1} << 30;

c10::Dict<c10::IValue, c10::IValue> readDict(const std::string& path) {
  if (const std::string kind = core::irregularFileKind(path); !kind.empty()) {
    throw std::runtime_error(path + ": is " + kind + ", not a weight file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (missing or unreadable)");
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw std::runtime_error(path + ": cannot read its size: " + ec.message());
  if (size > kMaxWeightFileBytes) {
    throw std::runtime_error(path + ": " + std::to_string(size) +
                             " bytes, larger than any LPIPS weight file");
  }
  std::vector<char> bytes(static_cast<std::size_t>(size));
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (in.gcount() != static_cast<std::streamsize>(bytes.size()))
    throw std::runtime_error(path + ": read error");
  c10::IValue value;
  try {
    value = compat::pickleLoad(bytes);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw std::runtime_error(path + ": not a torch.save file (" + why + ")");
  }
  if (!value.isGenericDict()) {
    throw std::runtime_error(path + ": expected a dict of tensors, got " + value.tagKind() +
                             " (save a plain dict, not an OrderedDict)");
  }
  return value.toGenericDict();
}

/// dict[key] as a float tensor of shape `want`, or a runtime_error naming file and key.
torch::Tensor tensorFor(const c10::Dict<c10::IValue, c10::IValue>& dict, const std::string& file,
                        const std::string& key, torch::IntArrayRef want, LpipsNet net) {
  const auto it = dict.find(c10::IValue(key));
  if (it == dict.end()) throw std::runtime_error(file + ": missing " + key);
  if (!it->value().isTensor()) {
    throw std::runtime_error(file + ": " + key + " is a " + it->value().tagKind() +
                             ", not a tensor");
  }
  const torch::Tensor t = it->value().toTensor();
  if (t.sizes() != want) {
    throw std::runtime_error(file + ": " + key + " has shape " + shapeText(t.sizes()) + " but " +
                             lpipsNetName(net) + " needs " + shapeText(want));
  }
  if (!t.is_floating_point()) {
    throw std::runtime_error(file + ": " + key + " has dtype " +
                             std::string(c10::toString(t.scalar_type())) +
                             ", expected a floating-point tensor");
  }
  return t.to(torch::kFloat32);
}

}  // namespace

LpipsNet parseLpipsNet(const std::string& name) {
  if (auto net = core::parseChoice<LpipsNet>(name)) return *net;
  throw std::invalid_argument("lpips net must be \"alex\" or \"vgg\", got \"" + name + "\"");
}

const char* lpipsNetName(LpipsNet net) { return core::choiceName(net); }

std::array<int64_t, 5> lpipsTapChannels(LpipsNet net) {
  if (net == LpipsNet::Alex) return {64, 192, 384, 256, 256};
  return {64, 128, 256, 512, 512};
}

LpipsImpl::LpipsImpl(LpipsNet net, uint64_t seed) : m_net(net) {
  m_tapIndices = net == LpipsNet::Alex ? std::vector<int64_t>{1, 4, 7, 9, 11}
                                       : std::vector<int64_t>{3, 8, 15, 22, 29};
  at::Generator gen = at::detail::createCPUGenerator(seed);
  torch::NoGradGuard no_grad;
  m_features = torch::nn::Sequential();
  for (const LayerSpec& layer : featureLayout(net)) {
    switch (layer.kind) {
      case LayerSpec::Kind::Conv: {
        const ConvSpec& c = layer.conv;
        torch::nn::Conv2d conv(torch::nn::Conv2dOptions(c.in, c.out, c.kernel)
                                   .stride(c.stride)
                                   .padding(c.padding)
                                   .bias(true));
        const double bound = 1.0 / std::sqrt(static_cast<double>(c.in * c.kernel * c.kernel));
        conv->weight.uniform_(-bound, bound, gen);
        conv->bias.uniform_(-bound, bound, gen);
        m_features->push_back(conv);
        break;
      }
      case LayerSpec::Kind::Relu:
        m_features->push_back(torch::nn::ReLU());
        break;
      case LayerSpec::Kind::Pool:
        m_features->push_back(torch::nn::MaxPool2d(
            torch::nn::MaxPool2dOptions(layer.pool_kernel).stride(layer.pool_stride)));
        break;
    }
  }
  register_module("features", m_features);
  for (auto& p : m_features->parameters()) p.set_requires_grad(false);
  const auto channels = lpipsTapChannels(net);
  for (std::size_t k = 0; k < channels.size(); ++k) {
    torch::Tensor w = torch::empty({1, channels[k], 1, 1});
    w.uniform_(0.0, 1.0 / std::sqrt(static_cast<double>(channels[k])), gen);
    m_lins.push_back(register_parameter("lin" + std::to_string(k), w, /*requires_grad=*/false));
  }
  m_shift = register_buffer(
      "shift", torch::tensor({-.030, -.088, -.188}, torch::kFloat32).view({1, 3, 1, 1}));
  m_scale = register_buffer("scale",
                            torch::tensor({.458, .448, .450}, torch::kFloat32).view({1, 3, 1, 1}));
}

void LpipsImpl::loadWeights(const std::string& backbone_file, const std::string& lin_file) {
  // Read and check everything first, so that a bad file leaves the current weights alone.
  const auto backbone = readDict(backbone_file);
  const auto lins = readDict(lin_file);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;  // (destination, source)
  for (const auto& item : m_features->named_parameters()) {
    const std::string key = "features." + item.key();
    copies.emplace_back(item.value(),
                        tensorFor(backbone, backbone_file, key, item.value().sizes(), m_net));
  }
  for (std::size_t k = 0; k < m_lins.size(); ++k) {
    const std::string key = "lin" + std::to_string(k) + ".model.1.weight";
    copies.emplace_back(m_lins[k], tensorFor(lins, lin_file, key, m_lins[k].sizes(), m_net));
  }
  torch::NoGradGuard no_grad;
  for (auto& [dst, src] : copies) dst.copy_(src);
}

std::vector<torch::Tensor> LpipsImpl::taps(const torch::Tensor& x) {
  std::vector<torch::Tensor> out;
  torch::Tensor h = (x - m_shift) / m_scale;
  int64_t index = 0;
  std::size_t next = 0;
  for (auto& layer : *m_features) {
    h = layer.forward(h);
    if (index == m_tapIndices[next]) {
      out.push_back(h);
      if (++next == m_tapIndices.size()) break;
    }
    ++index;
  }
  return out;
}

torch::Tensor LpipsImpl::forward(const torch::Tensor& x, const torch::Tensor& y) {
  if (x.dim() != 4 || x.size(1) != 3 || x.sizes() != y.sizes()) {
    throw std::invalid_argument("lpips expects two [B, 3, H, W] tensors of equal shape, got " +
                                shapeText(x.sizes()) + " and " + shapeText(y.sizes()));
  }
  const int64_t min_side = m_net == LpipsNet::Alex ? 31 : 16;  // the last tap must keep one pixel
  if (x.size(2) < min_side || x.size(3) < min_side) {
    throw std::invalid_argument(std::string("lpips ") + lpipsNetName(m_net) +
                                " needs images of at least " + std::to_string(min_side) + "x" +
                                std::to_string(min_side) + " pixels, got " +
                                std::to_string(x.size(3)) + "x" + std::to_string(x.size(2)));
  }
  const auto fx = taps(x);
  const auto fy = taps(y);
  torch::Tensor total;
  for (std::size_t k = 0; k < fx.size(); ++k) {
    const torch::Tensor nx = fx[k] / (fx[k].pow(2).sum(1, /*keepdim=*/true).sqrt() + kNormEps);
    const torch::Tensor ny = fy[k] / (fy[k].pow(2).sum(1, /*keepdim=*/true).sqrt() + kNormEps);
    const torch::Tensor d =
        torch::conv2d((nx - ny).pow(2), m_lins[k]).mean({2, 3}).squeeze(1);  // [B]
    total = total.defined() ? total + d : d;
  }
  return total;
}

Lpips loadLpips(LpipsNet net, const std::string& backbone_file, const std::string& lin_file) {
  Lpips model(net);
  model->loadWeights(backbone_file, lin_file);
  model->eval();
  return model;
}

double lpips(Lpips& model, const media::VideoFrames& a, const media::VideoFrames& b, int batch) {
  checkComparable(a, b);
  if (batch < 1)
    throw std::invalid_argument("lpips: batch must be >= 1, got " + std::to_string(batch));
  torch::NoGradGuard no_grad;
  const std::vector<int64_t> shape = {a.count, a.height, a.width, 3};
  // from_blob only reads: the tensors are converted before anything could write to them.
  const torch::Tensor ta =
      torch::from_blob(const_cast<uint8_t*>(a.rgb.data()), shape, torch::kUInt8);
  const torch::Tensor tb =
      torch::from_blob(const_cast<uint8_t*>(b.rgb.data()), shape, torch::kUInt8);
  // Frames go to the device the network is on (a GPU during training on one).
  const auto params = model->parameters();
  const torch::Device device =
      params.empty() ? torch::Device(torch::kCPU) : params.front().device();
  auto toInput = [&](const torch::Tensor& frames) {
    return frames.permute({0, 3, 1, 2}).to(device).to(torch::kFloat32) / 127.5 - 1.0;
  };
  double sum = 0.0;
  for (int64_t start = 0; start < a.count; start += batch) {
    const int64_t n = std::min<int64_t>(batch, a.count - start);
    sum += model->forward(toInput(ta.narrow(0, start, n)), toInput(tb.narrow(0, start, n)))
               .sum()
               .item<double>();
  }
  return sum / a.count;
}

}  // namespace tb::trainer::metrics
