// tokenbench-bench: times a quantizer loss or the data loader and prints one JSON line. The
// model rows (gen-step-recon, gen-step, discr-step, encode, decode, train-step) are
// `tokenbench-trainer bench`, which runs the training code itself.
//
// One measurement per process, so that the peak resident set size (getrusage ru_maxrss) belongs
// to that measurement alone; bench/run_model_bench.sh runs the cases.
//
//   --what lfq             LFQ entropy + commitment terms on random latents, forward + backward
//                          (--bits K, --tokens N, --estimate exact|factorized)
//          loader          the training data loader over a video folder or a shard folder
//                          (--data DIR, --data-type videos|shards): batches of the
//                          configuration's clips with --threads loader threads; reports delivered
//                          clips and clip frames per second (--repeats batches after --warmup)

#include "core/config_io.h"
#include "core/presets.h"
#include "trainer/data/clip_loader.h"
#include "trainer/models/lookup_free_quantizer.h"

#include <torch/torch.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <vector>

#include <sys/resource.h>

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t peakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

struct Timing {
  std::vector<double> seconds;
  double median() const {
    auto s = seconds;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    return n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  }
};

Timing measure(int warmup, int repeats, const std::function<void()>& body) {
  for (int i = 0; i < warmup; ++i) body();
  Timing t;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    body();
    t.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tokenbench-bench: time one piece of a training step (one JSON line on stdout)"};
  std::string what = "lfq", preset = "bench-small", config_file, estimate = "factorized";
  int batch = 0, threads = 2, warmup = 1, repeats = 3;
  std::int64_t bits = 10, tokens = 1280;
  std::string data_dir, data_type = "videos";
  app.add_option("--what", what, "lfq or loader (model rows: tokenbench-trainer bench)")
      ->check(CLI::IsMember({"lfq", "loader"}));
  app.add_option("--data", data_dir,
                 "loader: folder of video files, or a shard folder (tokenbench-trainer pack)");
  app.add_option("--data-type", data_type, "loader: videos (default) or shards")
      ->check(CLI::IsMember({"videos", "shards"}));
  app.add_option("--preset", preset, "Model preset (ignored with --config)");
  app.add_option("--config", config_file, "Configuration file instead of a preset");
  app.add_option("--batch", batch, "Clips per step (0: the configuration's train.batch_size)");
  app.add_option("--threads", threads, "Intra-op threads")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "Untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--repeats", repeats, "Timed runs (the median is reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--bits", bits, "lfq: bits per code K (codebook 2^K)")->check(CLI::Range(1, 24));
  app.add_option("--tokens", tokens, "lfq: tokens per step")->check(CLI::PositiveNumber);
  app.add_option("--estimate", estimate, "lfq: codebook entropy estimate")
      ->check(CLI::IsMember({"exact", "factorized"}));
  CLI11_PARSE(app, argc, argv);

  torch::set_num_threads(threads);
  torch::manual_seed(0);
  nlohmann::ordered_json out;
  out["what"] = what;
  out["threads"] = threads;
  out["repeats"] = repeats;
  Timing timing;
  std::int64_t baseline = 0;
  try {
    if (what == "lfq") {
      using namespace tb::trainer;
      LookupFreeQuantizer lfq(
          LookupFreeQuantizerOptions(bits, std::int64_t{1} << bits)
              .entropy_estimate(
                  tb::core::parseChoiceOrThrow<tb::core::EntropyEstimate>("--estimate", estimate)));
      lfq->train();
      // Latents as the encoder gives them: [B, K, t, h, w], here one row of `tokens` positions.
      const torch::Tensor latent = torch::randn({1, bits, tokens, 1, 1}).requires_grad_(true);
      out["bits"] = bits;
      out["tokens"] = tokens;
      out["estimate"] = estimate;
      baseline = peakRssBytes();
      timing = measure(warmup, repeats, [&] {
        latent.mutable_grad() = torch::Tensor();
        lfq->quantize(latent).loss.backward();
      });
    } else {
      const tb::core::ConfigLoad load =
          config_file.empty() ? tb::core::loadPreset(preset) : tb::core::loadRunConfig(config_file);
      if (!load.ok()) {
        for (const auto& e : load.errors) std::cerr << e.toString() << "\n";
        return 2;
      }
      auto config = load.config;
      if (batch <= 0) batch = config.train.batch_size;
      {
        if (data_dir.empty()) throw std::runtime_error("--what loader needs --data DIR");
        config.data.type =
            tb::core::parseChoiceOrThrow<tb::core::DataType>("--data-type", data_type);
        config.data.path = data_dir;
        config.data.valid_fraction = 0;
        tb::trainer::data::ClipDataset dataset(config.data, 0, {}, threads);
        tb::trainer::data::ClipLoader loader(dataset, batch, threads, 2 * threads);
        out["config"] = config_file.empty() ? preset : config_file;
        out["data"] = data_dir;
        out["data_type"] = data_type;
        out["files"] = dataset.trainSize();
        out["batch"] = batch;
        out["clip"] = {config.data.num_frames, config.data.image_size, config.data.image_size};
        baseline = peakRssBytes();
        timing = measure(warmup, repeats, [&] { (void)loader.next(); });
        double total = 0;
        for (double t : timing.seconds) total += t;
        out["clips_per_s"] = static_cast<double>(repeats) * batch / total;
        out["frames_per_s"] = static_cast<double>(repeats) * batch * config.data.num_frames / total;
        out["median_s"] = timing.median();
        out["peak_rss_bytes"] = peakRssBytes();
        std::cout << out.dump() << "\n";
        return 0;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-bench: " << e.what() << "\n";
    return 1;
  }
  out["median_s"] = timing.median();
  out["min_s"] = *std::min_element(timing.seconds.begin(), timing.seconds.end());
  out["seconds"] = timing.seconds;
  out["peak_rss_bytes"] = peakRssBytes();
  out["rss_before_bytes"] = baseline;
  std::cout << out.dump() << "\n";
  return 0;
}
