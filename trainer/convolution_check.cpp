#include "trainer/convolution_check.h"

#include "trainer/torch_compat.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <sstream>

namespace tb::trainer {
namespace {

std::mutex g_record_mutex;
std::vector<ConvolutionShape>* g_recorded = nullptr;

// An argument list as the op takes it, one value per spatial dimension (a single value stands
// for all of them: conv3d(x, w, {}, 2) passes stride [2]).
std::vector<std::int64_t> intList(const c10::IValue& v, std::size_t dims) {
  std::vector<std::int64_t> list = v.isIntList() ? v.toIntVector() : std::vector<std::int64_t>{};
  if (list.size() == 1 && dims > 1) list.assign(dims, list.front());
  return list;
}

// aten::convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups): every convolution module and functional reaches it. Read when the op starts: by its
// end the arguments may be gone from the stack.
std::unique_ptr<at::ObserverContext> recordOne(const at::RecordFunction& fn) {
  if (std::string(fn.name()) != "aten::convolution") return nullptr;
  const auto inputs = fn.inputs();
  if (inputs.size() < 9 || !inputs[0].isTensor() || !inputs[1].isTensor()) return nullptr;
  ConvolutionShape s;
  s.input = inputs[0].toTensor().sizes().vec();
  s.weight = inputs[1].toTensor().sizes().vec();
  const std::size_t dims = s.input.size() - 2;
  s.stride = intList(inputs[3], dims);
  s.padding = intList(inputs[4], dims);
  s.dilation = intList(inputs[5], dims);
  s.transposed = inputs[6].toBool();
  s.output_padding = intList(inputs[7], dims);
  s.groups = inputs[8].toInt();
  std::lock_guard<std::mutex> lock(g_record_mutex);
  if (g_recorded != nullptr &&
      std::find(g_recorded->begin(), g_recorded->end(), s) == g_recorded->end())
    g_recorded->push_back(std::move(s));
  return nullptr;
}

std::string listText(const std::vector<std::int64_t>& v) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

double relativeError(const torch::Tensor& low, const torch::Tensor& reference) {
  const auto ref = reference.to(torch::kDouble);
  const double norm = ref.norm().item<double>();
  const double diff = (low.to(torch::kDouble) - ref).norm().item<double>();
  if (norm == 0) return diff == 0 ? 0 : 1;
  return diff / norm;
}

// TF32 off for the life of the scope: the fp32 reference must be fp32.
class Tf32Off {
 public:
  Tf32Off()
      : m_cudnn(at::globalContext().allowTF32CuDNN()),
        m_cublas(at::globalContext().allowTF32CuBLAS()) {
    at::globalContext().setAllowTF32CuDNN(false);
    at::globalContext().setAllowTF32CuBLAS(false);
  }
  ~Tf32Off() {
    at::globalContext().setAllowTF32CuDNN(m_cudnn);
    at::globalContext().setAllowTF32CuBLAS(m_cublas);
  }
  Tf32Off(const Tf32Off&) = delete;
  Tf32Off& operator=(const Tf32Off&) = delete;

 private:
  bool m_cudnn, m_cublas;
};

// One convolution with gradients on: its leaves and its output.
struct Pass {
  torch::Tensor input, weight, output;
};

Pass forward(const ConvolutionFn& conv, const torch::Tensor& x, const torch::Tensor& w,
             const ConvolutionShape& shape) {
  Pass p{x.detach().requires_grad_(true), w.detach().requires_grad_(true), {}};
  p.output = conv(p.input, p.weight, shape);
  return p;
}

}  // namespace

bool ConvolutionShape::operator==(const ConvolutionShape& o) const {
  return input == o.input && weight == o.weight && stride == o.stride && padding == o.padding &&
         dilation == o.dilation && output_padding == o.output_padding &&
         transposed == o.transposed && groups == o.groups;
}

std::string ConvolutionShape::describe() const {
  std::string s = listText(input) + (transposed ? " *T " : " * ") + listText(weight) + " stride " +
                  listText(stride) + " padding " + listText(padding);
  if (std::any_of(dilation.begin(), dilation.end(), [](std::int64_t d) { return d != 1; }))
    s += " dilation " + listText(dilation);
  if (groups != 1) s += " groups " + std::to_string(groups);
  return s;
}

std::vector<ConvolutionShape> recordConvolutions(const std::function<void()>& body) {
  std::vector<ConvolutionShape> shapes;
  {
    std::lock_guard<std::mutex> lock(g_record_mutex);
    g_recorded = &shapes;
  }
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&recordOne).needsInputs(true));
  auto stop = [&] {
    at::removeCallback(handle);
    std::lock_guard<std::mutex> lock(g_record_mutex);
    g_recorded = nullptr;
  };
  try {
    body();
  } catch (...) {
    stop();
    throw;
  }
  stop();
  return shapes;
}

double ConvolutionErrors::worst() const { return std::max({output, grad_input, grad_weight}); }

torch::Tensor convolve(const torch::Tensor& input, const torch::Tensor& weight,
                       const ConvolutionShape& shape) {
  return at::convolution(input, weight, {}, shape.stride, shape.padding, shape.dilation,
                         shape.transposed, shape.output_padding, shape.groups);
}

ConvolutionErrors compareWithFp32(const ConvolutionShape& shape, const torch::Device& device,
                                  at::ScalarType dtype, std::uint64_t seed,
                                  const ConvolutionFn& low) {
  // The values, drawn on the CPU (the same on every device) and rounded to `dtype`.
  torch::manual_seed(seed);
  const auto rounded = [&](const torch::Tensor& t) {
    return t.to(dtype).to(torch::kFloat).to(device);
  };
  std::int64_t fan_in = 1;
  for (std::size_t i = 1; i < shape.weight.size(); ++i) fan_in *= shape.weight[i];
  const torch::Tensor x = rounded(torch::randn(shape.input));
  const torch::Tensor w =
      rounded(torch::randn(shape.weight) /
              std::sqrt(static_cast<double>(std::max<std::int64_t>(1, fan_in))));

  Pass reference, reduced;
  torch::Tensor grad_output;
  {
    Tf32Off tf32_off;
    reference = forward(convolve, x, w, shape);
    grad_output = rounded(torch::randn(reference.output.sizes()));
    reference.output.backward(grad_output);
  }
  reduced = forward(low, x.to(dtype), w.to(dtype), shape);
  reduced.output.backward(grad_output.to(reduced.output.scalar_type()));
  ConvolutionErrors e;
  e.output = relativeError(reduced.output.detach(), reference.output.detach());
  e.grad_input = relativeError(reduced.input.grad(), reference.input.grad());
  e.grad_weight = relativeError(reduced.weight.grad(), reference.weight.grad());
  return e;
}

double convolutionTolerance(at::ScalarType dtype) { return dtype == at::kFloat ? 1e-4 : 2e-2; }

}  // namespace tb::trainer
