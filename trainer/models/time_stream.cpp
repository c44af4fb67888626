// The chunk-to-chunk state of causal layers (time_stream.h).
#include "trainer/models/time_stream.h"

namespace tb::trainer {
namespace {
thread_local TimeStream* g_active = nullptr;
}  // namespace

TimeStream* TimeStream::active() { return g_active; }

torch::Tensor TimeStream::withHistory(
    const void* owner, const torch::Tensor& x, std::int64_t dim, std::int64_t keep,
    const std::function<torch::Tensor(const torch::Tensor&)>& pad) {
  if (keep == 0) return x;
  torch::Tensor& kept = state(owner);
  const torch::Tensor full = kept.defined() ? torch::cat({kept, x}, dim) : pad(x);
  TORCH_CHECK(full.size(dim) == x.size(dim) + keep,
              "TimeStream: the padding of a causal layer "
              "adds ",
              full.size(dim) - x.size(dim), " frames, its history keeps ", keep);
  kept = full.narrow(dim, full.size(dim) - keep, keep).clone();
  return full;
}

torch::Tensor& TimeStream::state(const void* owner, int slot) { return m_states[{owner, slot}]; }

bool TimeStream::firstChunk(const void* owner) { return m_started.insert(owner).second; }

TimeStreamScope::TimeStreamScope() : m_previous(g_active) { g_active = &m_stream; }

TimeStreamScope::~TimeStreamScope() { g_active = m_previous; }

}  // namespace tb::trainer
