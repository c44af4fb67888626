#include "trainer/evaluation/frechet_evaluation.h"

#include "core/metric_names.h"
#include "core/sha256.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/user_error.h"

#include <algorithm>
#include <system_error>

namespace tb::trainer {
namespace {

constexpr std::int64_t kBatch = 4;  // clips per feature-network batch

}  // namespace

FrechetEvaluation::FrechetEvaluation(const core::EvalConfig& eval, const torch::Device& device,
                                     std::filesystem::path folder)
    : m_device(device), m_folder(std::move(folder)) {
  const auto load = [&](bool videos, const char* key, const std::string& file) {
    if (file.empty()) return;
    try {
      m_metrics.push_back(
          {std::make_unique<metrics::FeatureNetwork>(videos, file, device), {}, {}});
    } catch (const std::exception& e) {
      throw UserError(
          "eval_weights_invalid", std::string(key) + ": " + e.what(),
          std::string("set ") + key + " to the reference's weight file, or leave it empty");
    }
  };
  load(false, "eval.fid_weights", eval.fid_weights);
  load(true, "eval.fvd_weights", eval.fvd_weights);
}

std::vector<std::pair<std::string, double>> FrechetEvaluation::score(
    Tokenizer& tokenizer, std::int64_t count,
    const std::function<torch::Tensor(std::int64_t)>& clipAt, const std::string& clips_key) {
  torch::NoGradGuard no_grad;
  const bool was_training = tokenizer.is_training();
  tokenizer.eval();
  for (Metric& m : m_metrics) {
    core::Sha256 key;
    key.update(m.network->sha256() + "\n" + clips_key);
    const std::filesystem::path file =
        m_folder / ("reals_" + std::string(m.network->metric()) + "_" +
                    key.hexDigest().substr(0, 16) + ".safetensors");
    if (m.reals && m.reals_file == file) continue;
    m.reals_file = file;
    std::error_code ec;
    if (std::filesystem::is_regular_file(file, ec)) {
      try {
        m.reals = metrics::FeatureStatistics::load(file, m.network->dim());
        continue;
      } catch (const std::exception&) {
        // an unreadable cache is computed again below
      }
    }
    m.reals.emplace(m.network->dim());
  }
  // Which metrics still need their reals: those whose statistics are empty.
  std::vector<bool> need_reals;
  for (const Metric& m : m_metrics) need_reals.push_back(m.reals->count() == 0);
  const bool any_reals = std::find(need_reals.begin(), need_reals.end(), true) != need_reals.end();

  std::vector<metrics::FeatureStatistics> fakes;
  for (const Metric& m : m_metrics) fakes.emplace_back(m.network->dim());
  std::vector<torch::Tensor> reals_batch, fakes_batch;
  const auto flush = [&] {
    for (std::size_t k = 0; k < m_metrics.size(); ++k) {
      if (need_reals[k] && !reals_batch.empty())
        m_metrics[k].reals->add(m_metrics[k].network->features(reals_batch));
      if (!fakes_batch.empty()) fakes[k].add(m_metrics[k].network->features(fakes_batch));
    }
    reals_batch.clear();
    fakes_batch.clear();
  };
  for (std::int64_t i = 0; i < count; ++i) {
    const torch::Tensor clip = clipAt(i);
    const torch::Tensor recon = tokenizer.forward(clip.unsqueeze(0).to(m_device)).recon[0];
    if (any_reals) reals_batch.push_back(media::framesToBytes(media::tensorToFrames(clip)));
    fakes_batch.push_back(media::framesToBytes(media::tensorToFrames(recon)));
    if ((i + 1) % kBatch == 0) flush();
  }
  flush();
  if (was_training) tokenizer.train();

  std::vector<std::pair<std::string, double>> rows;
  for (std::size_t k = 0; k < m_metrics.size(); ++k) {
    Metric& m = m_metrics[k];
    if (need_reals[k]) {
      std::error_code ec;
      std::filesystem::create_directories(m_folder, ec);
      m.reals->save(m.reals_file, {{"weights_sha256", m.network->sha256()}, {"clips", clips_key}});
    }
    if (m.reals->count() < 2) continue;
    const bool fvd = m.network->videos();
    rows.emplace_back(std::string(fvd ? core::metric::kValidRfvd : core::metric::kValidRfid),
                      metrics::frechetDistance(*m.reals, fakes[k]));
    rows.emplace_back(
        std::string(fvd ? core::metric::kEvalRfvdSamples : core::metric::kEvalRfidSamples),
        static_cast<double>(m.reals->count()));
  }
  return rows;
}

}  // namespace tb::trainer
