#pragma once
// Coding a long video in consecutive time chunks with the result of one pass over the whole video.
// While a TimeStreamScope lives, the causal layers keep what the next chunk needs from the one
// before: the last input frames of a causal convolution or time downsampler (in place of their
// front padding), a gate loop's state, causal attention's keys and values, the token shift's last
// frame. Each layer asks the thread's active stream (TimeStream::active()) and, without one,
// runs as usual. Memory per chunk is bounded; causal attention's keys and values grow with the
// frames seen (one channel vector per position and frame of that layer).

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace tb::trainer {

class TimeStream {
 public:
  /// The stream of this thread while a TimeStreamScope lives, else nullptr.
  static TimeStream* active();

  /// `x` with `keep` frames in front along `dim`: the frames `owner` kept from the previous
  /// chunk, or on the first chunk `pad(x)` (the layer's own causal padding, which must add
  /// exactly `keep` frames). Keeps the last `keep` frames of the result for the next chunk.
  torch::Tensor withHistory(const void* owner, const torch::Tensor& x, std::int64_t dim,
                            std::int64_t keep,
                            const std::function<torch::Tensor(const torch::Tensor&)>& pad);

  /// A tensor `owner` carries between chunks (its `slot`-th); undefined before it sets one.
  torch::Tensor& state(const void* owner, int slot = 0);

  /// True the first time `owner` asks (its first chunk), false after.
  bool firstChunk(const void* owner);

 private:
  std::map<std::pair<const void*, int>, torch::Tensor> m_states;
  std::set<const void*> m_started;
};

/// Makes a fresh TimeStream the thread's active one while it lives (scopes nest).
class TimeStreamScope {
 public:
  TimeStreamScope();
  ~TimeStreamScope();
  TimeStreamScope(const TimeStreamScope&) = delete;
  TimeStreamScope& operator=(const TimeStreamScope&) = delete;

 private:
  TimeStream m_stream;
  TimeStream* m_previous;
};

}  // namespace tb::trainer
