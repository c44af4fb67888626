#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

// Interval means of named values; names may appear part-way (the GAN terms from
// loss.discr_start_step on), so values are matched by name, each averaged over its own count.
class IntervalMeans {
 public:
  void add(const std::vector<std::pair<std::string, double>>& values) {
    for (const auto& [name, v] : values) {
      auto it =
          std::find_if(m_sums.begin(), m_sums.end(), [&](const auto& e) { return e.name == name; });
      if (it == m_sums.end()) it = m_sums.insert(m_sums.end(), {name, 0.0, 0});
      it->sum += v;
      ++it->count;
    }
  }
  std::vector<std::pair<std::string, double>> take() {
    std::vector<std::pair<std::string, double>> out;
    for (const auto& e : m_sums) out.emplace_back(e.name, e.sum / e.count);
    m_sums.clear();
    return out;
  }

 private:
  struct Entry {
    std::string name;
    double sum;
    int count;
  };
  std::vector<Entry> m_sums;
};

}  // namespace tb::trainer
