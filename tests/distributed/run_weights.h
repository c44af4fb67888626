#pragma once
// What the multi-process tests compare between runs: a checkpoint's tensors, the largest
// difference between two sets, and a free loopback port for a store.

#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace tb::trainer::testing {

/// The tensors of `file` in the checkpoint of `step` of `run`, by name.
inline std::map<std::string, torch::Tensor> finalWeights(
    const std::filesystem::path& run, std::int64_t step,
    const std::string& file = "model.safetensors") {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] :
       weights::loadTensors(run / "checkpoints" / ("step_" + std::to_string(step)) / file)) {
    out[name] = t;
  }
  return out;
}

// Tolerance: the two runs sum the same per-sample gradients in a different order (two
// half-batch means averaged over the wire, against one mean), so float32 rounding differs by
// about 1e-7 relative per step; after 4 AdamW steps at lr 1e-3 parameters agree to 1e-5.
inline constexpr double kSameBatchTolerance = 1e-5;

/// The largest absolute difference between same-named floating tensors; a name missing from
/// either side is a test failure.
inline double maxDifference(const std::map<std::string, torch::Tensor>& a,
                            const std::map<std::string, torch::Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end()) {
      ADD_FAILURE() << name << " missing";
      continue;
    }
    if (t.is_floating_point()) worst = std::max(worst, (t - it->second).abs().max().item<double>());
  }
  return worst;
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
inline int freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace tb::trainer::testing
