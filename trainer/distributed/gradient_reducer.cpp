#include "trainer/distributed/gradient_reducer.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>

namespace tb::trainer::distributed {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

GradientReducer::GradientReducer(RankGroup& group, const std::vector<torch::Tensor>& params, double bucket_mb)
    : m_group(group) {
  for (const auto& p : params) {
    if (p.requires_grad()) m_params.push_back(p);
  }
  m_bucket_of.resize(m_params.size());
  const std::int64_t cap = static_cast<std::int64_t>(bucket_mb * 1024 * 1024);
  // Reverse order: the last layers' gradients are ready first.
  for (std::size_t k = m_params.size(); k-- > 0;) {
    const std::int64_t bytes = m_params[k].numel() * static_cast<std::int64_t>(m_params[k].element_size());
    const bool fits = !m_buckets.empty() && !m_buckets.back().params.empty() && cap > 0 &&
                      m_buckets.back().flat.numel() * 4 + bytes <= cap &&
                      m_params[k].scalar_type() == m_params[m_buckets.back().params.front()].scalar_type();
    if (!fits) {
      m_buckets.emplace_back();
      // Buckets live where the backend reads them (the CPU for Gloo, the GPU for NCCL).
      m_buckets.back().flat =
          torch::empty({0}, m_params[k].options().device(group.commDevice()).requires_grad(false));
    }
    Bucket& b = m_buckets.back();
    b.offsets.push_back(b.flat.numel());
    b.params.push_back(k);
    b.flat = torch::empty({b.flat.numel() + m_params[k].numel()}, b.flat.options());
    m_bucket_of[k] = m_buckets.size() - 1;
  }
  for (std::size_t k = 0; k < m_params.size(); ++k) {
    auto accumulator = torch::autograd::impl::grad_accumulator(m_params[k]);
    accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, k](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          onGradientReady(k);
          return outputs;
        }));
    m_accumulators.push_back(std::move(accumulator));
  }
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
