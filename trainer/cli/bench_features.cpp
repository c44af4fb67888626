// `bench --what fid-features | fvd-features`: the feature networks of rFID and rFVD, timed as
// `evaluate` runs them (random weights: the time does not depend on their values).
#include "trainer/cli/bench_command.h"

#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/fvd_i3d.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training_device.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

namespace tb::trainer::cli {

int benchFeatures(const BenchArgs& args) {
  using Clock = std::chrono::steady_clock;
  const bool videos = args.what == "fvd-features";
  const int threads = args.threads > 0
                          ? args.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  const int batch = args.batch > 0 ? args.batch : (videos ? 2 : 16);
  try {
    core::TrainConfig train;
    train.device = args.device.empty() ? "auto" : args.device;
    const torch::Device device = resolveTrainingDevice(train, "--device");
    compat::setCurrentDevice(device);
    torch::manual_seed(0);
    metrics::FidInception inception{nullptr};
    metrics::FvdI3d i3d{nullptr};
    torch::nn::Module* network = nullptr;
    if (videos) {
      i3d = metrics::FvdI3d();
      network = i3d.get();
    } else {
      inception = metrics::FidInception();
      network = inception.get();
    }
    {
      torch::NoGradGuard no_grad;
      for (auto& p : network->parameters()) p.normal_(0, 0.02);
    }
    network->to(device);
    // Inputs as evaluate feeds them: ImageNet-sized images, 16-frame clips at 128 px (the UCF-101
    // protocol's size), both resized inside the networks.
    const torch::Tensor input =
        videos ? torch::randint(0, 256, {batch, 16, 128, 128, 3}, torch::kUInt8).to(device)
               : torch::rand({batch, 3, 256, 256}).to(device);
    const auto once = [&] {
      const torch::Tensor f = videos ? i3d->forward(input) : inception->forward(input);
      (void)f.to(torch::kCPU);  // waits for the device
    };
    std::vector<double> seconds;
    for (int i = 0; i < args.warmup + args.steps; ++i) {
      const auto start = Clock::now();
      once();
      if (i >= args.warmup)
        seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const std::size_t n = seconds.size();
    const double median = n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
    nlohmann::ordered_json out;
    out["what"] = args.what;
    out["device"] = device.str();
    out["threads"] = threads;
    out["batch"] = batch;
    out["input_shape"] = input.sizes().vec();
    out["median_s"] = median;
    out["min_s"] = seconds.front();
    out["max_s"] = seconds.back();
    out[videos ? "clips_per_s" : "images_per_s"] = batch / median;
    out["peak_rss_mb"] = static_cast<double>(peakResidentBytes()) / (1024.0 * 1024.0);
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer bench: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tb::trainer::cli
