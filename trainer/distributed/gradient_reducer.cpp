#include "trainer/distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>

namespace tb::trainer::distributed {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

std::vector<std::shared_ptr<torch::autograd::Node>> onGradientsAccumulated(
    const std::vector<torch::Tensor>& params, const std::function<void(std::size_t)>& ready) {
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;
  for (std::size_t k = 0; k < params.size(); ++k) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params[k]);
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [ready, k](const torch::autograd::variable_list& outputs,
                   const torch::autograd::variable_list&) {
          ready(k);
          return outputs;
        }));
    accumulators.push_back(std::move(accumulator));
  }
  return accumulators;
}

std::vector<std::vector<std::size_t>> gradientBuckets(const std::vector<torch::Tensor>& params,
                                                      double bucket_mb) {
  std::vector<std::vector<std::size_t>> buckets;
  const double cap = bucket_mb * 1024 * 1024;
  double bytes = 0;
  // Reverse order: the last layers' gradients are ready first.
  for (std::size_t k = params.size(); k-- > 0;) {
    const double size =
        static_cast<double>(params[k].numel()) * static_cast<double>(params[k].element_size());
    const bool fits = !buckets.empty() && bytes + size <= cap &&
                      params[k].scalar_type() == params[buckets.back().front()].scalar_type();
    if (!fits) {
      buckets.emplace_back();
      bytes = 0;
    }
    buckets.back().push_back(k);
    bytes += size;
  }
  return buckets;
}

GradientReducer::GradientReducer(RankGroup& group, const std::vector<torch::Tensor>& params,
                                 double bucket_mb)
    : m_group(group) {
  for (const auto& p : params) {
    if (p.requires_grad()) m_params.push_back(p);
  }
  m_bucket_of.resize(m_params.size());
  for (const auto& members : gradientBuckets(m_params, bucket_mb)) {
    Bucket& b = m_buckets.emplace_back();
    for (const std::size_t k : members) {
      b.offsets.push_back(b.params.empty() ? 0
                                           : b.offsets.back() + m_params[b.params.back()].numel());
      b.params.push_back(k);
      m_bucket_of[k] = m_buckets.size() - 1;
    }
    // Buckets live where the backend reads them (the CPU for Gloo, the GPU for NCCL).
    const std::int64_t numel = b.offsets.back() + m_params[b.params.back()].numel();
    b.flat = torch::empty(
        {numel},
        m_params[members.front()].options().device(group.commDevice()).requires_grad(false));
  }
  m_accumulators = onGradientsAccumulated(m_params, [this](std::size_t k) { onGradientReady(k); });
}

GradientReducer::~GradientReducer() {
  // Hooks stay on the accumulators (LibTorch cannot remove a post hook); disarmed they do nothing.
  std::lock_guard<std::mutex> guard(m_mutex);
  m_armed = false;
}

void GradientReducer::arm() {
  std::lock_guard<std::mutex> guard(m_mutex);
  for (auto& b : m_buckets) {
    b.ready = 0;
    b.launched = false;
  }
  m_armed = true;
  m_last_launch_s = 0;
}

void GradientReducer::onGradientReady(std::size_t param) {
  std::lock_guard<std::mutex> guard(m_mutex);
  if (!m_armed) return;
  Bucket& b = m_buckets[m_bucket_of[param]];
  if (b.launched) return;
  if (++b.ready == b.params.size()) launch(b);
}

void GradientReducer::launch(Bucket& b) {
  const auto start = Clock::now();
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < b.params.size(); ++i) {
    const torch::Tensor& p = m_params[b.params[i]];
    torch::Tensor slice = b.flat.narrow(0, b.offsets[i], p.numel());
    if (p.grad().defined()) {
      slice.copy_(p.grad().reshape({-1}));
    } else {
      slice.zero_();
    }
  }
  b.launched = true;
  b.pending = m_group.allReduceSumAsync(b.flat);
  m_last_launch_s += secondsSince(start);
}

void GradientReducer::finish() {
  std::lock_guard<std::mutex> guard(m_mutex);
  m_armed = false;
  for (auto& b : m_buckets) {
    if (!b.launched) launch(b);
  }
  const auto start = Clock::now();
  torch::NoGradGuard no_grad;
  const double scale = 1.0 / m_group.worldSize();
  for (auto& b : m_buckets) {
    m_group.wait(b.pending);
    b.flat.mul_(scale);
    for (std::size_t i = 0; i < b.params.size(); ++i) {
      torch::Tensor& p = m_params[b.params[i]];
      const torch::Tensor slice = b.flat.narrow(0, b.offsets[i], p.numel()).view(p.sizes());
      if (p.grad().defined()) {
        p.mutable_grad().copy_(slice);
      } else {
        p.mutable_grad() = slice.clone();
      }
    }
  }
  m_last_finish_s = secondsSince(start);
}

}  // namespace tb::trainer::distributed
