#include "core/metric_panels.h"

namespace tb::core {

const std::vector<MetricPanel>& metricPanels() {
  static const std::vector<MetricPanel> panels = {
      {"loss",
       "Loss",
       "loss",
       {"train/loss", "train/recon_loss", "valid/recon_loss", "train/recon_l1", "train/recon_mse",
        "train/perceptual_loss"},
       true,
       false},
      {"quantizer",
       "Quantizer losses",
       "loss",
       {"train/quantizer*", "train/commitment*", "train/entropy*"},
       true,
       false},
      {"gan",
       "GAN",
       "value",
       {"train/gan_loss", "train/discr_loss", "train/adaptive_weight", "train/r1_penalty",
        "train/lecam*", "train/logits_*"},
       true,
       false},
      {"lr", "Learning rate", "learning rate", {"train/lr", "train/*_lr"}, false, false},
      {"grad", "Gradient norm", "norm", {"train/*grad_norm*"}, true, false},
      {"psnr", "Held-out PSNR over wall-clock time", "PSNR (dB)", {"valid/psnr"}, false, true},
      {"quality", "Held-out SSIM and LPIPS", "value", {"valid/ssim", "valid/lpips"}, false, false},
      {"frechet",
       "Held-out rFID and rFVD",
       "Fréchet distance",
       {"valid/rfid", "valid/rfvd"},
       false,
       false},
      {"eval", "rFID and rFVD samples", "samples", {"eval/*"}, false, false},
      {"usage", "Codebook usage", "share of codes used", {"valid/codebook_usage"}, false, false},
      {"perplexity", "Codebook perplexity", "perplexity", {"valid/perplexity"}, false, false},
      {"throughput", "Throughput", "steps/s", {"perf/it_per_s"}, true, false},
      {"steptime",
       "Step time and data wait",
       "seconds",
       {"perf/step_s", "perf/data_wait_s"},
       true,
       false},
      {"datawait",
       "Data wait share",
       "share of step time",
       {"perf/data_wait_fraction"},
       true,
       false},
      {"data", "Skipped files", "files", {"data/*"}, false, false},
      {"valid", "Other validation metrics", "value", {"valid/*"}, false, false},
      {"other", "Other metrics", "value", {"*"}, true, false},
  };
  return panels;
}

const MetricPanel& metricPanelOf(std::string_view metric) {
  for (const MetricPanel& panel : metricPanels()) {
    for (const char* pattern : panel.patterns) {
      if (metricPatternMatches(pattern, metric)) return panel;
    }
  }
  return metricPanels().back();
}

bool metricPatternMatches(std::string_view pattern, std::string_view metric) {
  const std::size_t star = pattern.find('*');
  if (star == std::string_view::npos) return pattern == metric;
  if (metric.substr(0, star) != pattern.substr(0, star)) return false;
  const std::string_view rest = pattern.substr(star + 1);
  for (std::size_t i = star; i <= metric.size(); ++i) {
    if (metricPatternMatches(rest, metric.substr(i))) return true;
  }
  return false;
}

}  // namespace tb::core
