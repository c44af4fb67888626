#pragma once
// rFID / rFVD while training (eval.every_steps): the tokenizer's reconstructions of a fixed set
// of held-out clips against the clips themselves, through the feature networks of
// eval.fid_weights (every frame) and eval.fvd_weights (every clip). The reals' statistics are
// computed at the first evaluation and kept in <run>/eval/, so a resumed run reuses them.

#include "core/run_config.h"
#include "trainer/evaluation/feature_network.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/models/tokenizer.h"

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

class FrechetEvaluation {
 public:
  /// Loads the configured networks onto `device`. Throws UserError "eval_weights_invalid"
  /// naming the key and the file when one cannot be read as its network's weights.
  FrechetEvaluation(const core::EvalConfig& eval, const torch::Device& device,
                    std::filesystem::path folder);

  /// valid/rfid (and eval/rfid_samples), valid/rfvd (eval/rfvd_samples) of `tokenizer` on
  /// `count` clips ([3, T, H, W] in [-1, 1], from clipAt(0 .. count - 1)); `clips_key` names
  /// which clips they are (the same key reuses the reals' statistics). No gradients.
  std::vector<std::pair<std::string, double>> score(
      Tokenizer& tokenizer, std::int64_t count,
      const std::function<torch::Tensor(std::int64_t)>& clipAt, const std::string& clips_key);

 private:
  struct Metric {
    std::unique_ptr<metrics::FeatureNetwork> network;
    std::optional<metrics::FeatureStatistics> reals;
    std::filesystem::path reals_file;  // <folder>/reals_<metric>_<key>: which clips they are
  };

  std::vector<Metric> m_metrics;
  torch::Device m_device;
  std::filesystem::path m_folder;
};

}  // namespace tb::trainer
