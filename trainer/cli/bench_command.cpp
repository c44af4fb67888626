#include "trainer/cli/bench_command.h"

#include "core/config_io.h"
#include "trainer/cli/bench_profile.h"
#include "trainer/cli/model_commands.h"
#include "trainer/convolution_check.h"
#include "trainer/cpu_features.h"
#include "trainer/runtime_info.h"
#include "trainer/torch_compat.h"
#include "trainer/training/training_step.h"
#include "trainer/training_device.h"

#include <ATen/record_function.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

namespace tb::trainer::cli {
namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

const std::vector<std::string> kWhats = {"gen-step-recon", "gen-step",     "discr-step",
                                         "encode",         "decode",       "train-step",
                                         "conv-check",     "fid-features", "fvd-features"};

double peakRssMb() { return static_cast<double>(peakResidentBytes()) / (1024.0 * 1024.0); }

double secondsOf(const std::function<void()>& body) {
  const auto start = Clock::now();
  body();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// FLOPs of the matrix work the ops ran, from their shapes: a RecordFunction callback on every
// convolution (forward and backward), mm, addmm, bmm and baddbmm. Element-wise work is not counted.
std::atomic<double> g_flops{0};

double tensorNumel(const c10::IValue& v) {
  return v.isTensor() ? static_cast<double>(v.toTensor().numel()) : 0;
}

// Multiply-adds per output element of a non-transposed convolution (per input element of a
// transposed one): the weight's elements per output channel (input channel of a transposed one).
double macsPerElement(const at::Tensor& weight) {
  return weight.size(0) > 0
             ? static_cast<double>(weight.numel()) / static_cast<double>(weight.size(0))
             : 0;
}

// Output elements of a non-transposed convolution: batch x output channels x every spatial
// size (in + 2 padding - dilation (kernel - 1) - 1) / stride + 1.
double convolutionOutputs(const at::Tensor& input, const at::Tensor& weight,
                          const std::vector<std::int64_t>& stride,
                          const std::vector<std::int64_t>& padding,
                          const std::vector<std::int64_t>& dilation) {
  const std::size_t dims = static_cast<std::size_t>(input.dim()) - 2;
  const auto pick = [](const std::vector<std::int64_t>& v, std::size_t i) {
    return v.size() == 1 ? v[0] : v[i];
  };
  double n = static_cast<double>(input.size(0)) * static_cast<double>(weight.size(0));
  for (std::size_t i = 0; i < dims; ++i) {
    const std::int64_t in = input.size(static_cast<std::int64_t>(i) + 2);
    const std::int64_t k = weight.size(static_cast<std::int64_t>(i) + 2);
    n *= static_cast<double>(
        (in + 2 * pick(padding, i) - pick(dilation, i) * (k - 1) - 1) / pick(stride, i) + 1);
  }
  return n;
}

// Counted when the op starts, from its arguments alone: by its end they may be gone from the
// stack (LibTorch 2.x consumes them).
std::unique_ptr<at::ObserverContext> countOp(const at::RecordFunction& fn) {
  const std::string name = fn.name();
  const auto inputs = fn.inputs();
  double flops = 0;
  if (name == "aten::convolution" && inputs.size() >= 9) {
    // (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    const at::Tensor& input = inputs[0].toTensor();
    const at::Tensor& weight = inputs[1].toTensor();
    const bool transposed = inputs[6].toBool();
    flops = 2 * macsPerElement(weight) *
            (transposed ? tensorNumel(inputs[0])
                        : convolutionOutputs(input, weight, inputs[3].toIntVector(),
                                             inputs[4].toIntVector(), inputs[5].toIntVector()));
  } else if (name == "aten::convolution_backward" && inputs.size() >= 11) {
    // (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
    // output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias): the input and
    // the weight gradient each cost one forward.
    const at::Tensor& weight = inputs[2].toTensor();
    const bool transposed = inputs[7].toBool();
    const double forward =
        2 * macsPerElement(weight) * tensorNumel(transposed ? inputs[1] : inputs[0]);
    const auto mask = inputs[10].toBoolList();
    flops = forward *
            ((mask.size() > 0 && mask.get(0) ? 1 : 0) + (mask.size() > 1 && mask.get(1) ? 1 : 0));
  } else if ((name == "aten::mm" || name == "aten::bmm") && inputs.size() >= 2) {
    const at::Tensor& a = inputs[0].toTensor();
    flops = 2 * static_cast<double>(a.numel()) * static_cast<double>(inputs[1].toTensor().size(-1));
  } else if ((name == "aten::addmm" || name == "aten::baddbmm") && inputs.size() >= 3) {
    const at::Tensor& a = inputs[1].toTensor();
    flops = 2 * static_cast<double>(a.numel()) * static_cast<double>(inputs[2].toTensor().size(-1));
  } else {
    return nullptr;
  }
  double current = g_flops.load();
  while (!g_flops.compare_exchange_weak(current, current + flops)) {
  }
  return nullptr;
}

double countFlops(const std::function<void()>& body) {
  g_flops = 0;
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&countOp).needsInputs(true));
  try {
    body();
  } catch (...) {
    at::removeCallback(handle);
    throw;
  }
  at::removeCallback(handle);
  return g_flops.load();
}

// The machine's attainable rates at the set threads, best of five: a 1024^3 float matrix product
// (BLAS) and a 3x3 convolution, 512 -> 512 channels on 16 16x16 maps (oneDNN, which beats the
// BLAS: 341 against 206 GFLOP/s on a 2-core AVX-512 machine). The larger is the peak.
struct PeakRates {
  double gemm = 0;
  double conv = 0;
};

double bestGflops(double flops, const std::function<void()>& op) {
  op();
  double best = 1e30;
  for (int i = 0; i < 5; ++i) best = std::min(best, secondsOf(op));
  return flops / best / 1e9;
}

PeakRates measurePeakRates() {
  torch::NoGradGuard no_grad;
  const torch::Tensor a = torch::randn({1024, 1024});
  const torch::Tensor b = torch::randn({1024, 1024});
  torch::Tensor c = torch::empty({1024, 1024});
  const torch::Tensor x = torch::randn({16, 512, 18, 18});
  const torch::Tensor w = torch::randn({512, 512, 3, 3});
  PeakRates peak;
  peak.gemm = bestGflops(2.0 * 1024 * 1024 * 1024, [&] { torch::mm_out(c, a, b); });
  peak.conv = bestGflops(2.0 * 512 * 512 * 9 * 16 * 16 * 16, [&] { (void)torch::conv2d(x, w); });
  return peak;
}

// The GPU's attainable bf16 rate: an 8192^3 torch::mm, timed with CUDA events after warm-up,
// best of five (TFLOP/s).
double measureBf16GemmPeakTflops(const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const auto options = torch::TensorOptions().device(device).dtype(torch::kBFloat16);
  const std::int64_t n = 8192;
  const torch::Tensor a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
  torch::Tensor c = torch::empty({n, n}, options);
  compat::DeviceTimer timer(device);
  for (int i = 0; i < 3; ++i) torch::mm_out(c, a, b);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    timer.start();
    torch::mm_out(c, a, b);
    timer.stop();
    best = std::min(best, timer.seconds());
  }
  return 2.0 * static_cast<double>(n) * n * n / best / 1e12;
}

struct Measurement {
  std::vector<double> seconds;
  double flops = 0;
};

// `warmup` untimed repetitions (the first one counts the FLOPs; with no warm-up an extra untimed
// repetition does), then `steps` timed ones, each timed on `device` (CUDA events on a GPU).
Measurement measure(const torch::Device& device, int warmup, int steps, bool profile,
                    const std::function<void()>& body) {
  Measurement m;
  m.flops = countFlops(body);
  if (profile) printProfile(body);
  for (int i = 1; i < warmup; ++i) body();
  compat::synchronize(device);
  compat::DeviceTimer timer(device);
  for (int i = 0; i < steps; ++i) {
    timer.start();
    body();
    timer.stop();
    m.seconds.push_back(timer.seconds());
  }
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int fail(int code, const std::string& message, const std::string& hint = {}) {
  std::cerr << "tokenbench-trainer bench: error: " << message << "\n";
  if (!hint.empty()) std::cerr << "hint: " << hint << "\n";
  return code;
}

// --what conv-check: every distinct convolution of one generator step with every loss
// (tokenizer, LPIPS, discriminator), forward and backward at the reduced precision against fp32.
// Adds the rows to `out`; returns whether all are within the tolerance.
bool checkConvolutions(TrainingStep& step, const torch::Tensor& video, const torch::Device& device,
                       at::ScalarType dtype, Json& out) {
  const std::vector<ConvolutionShape> shapes = recordConvolutions([&] {
    StepValues values;
    step.zeroGrad(step.discriminator() != nullptr);
    (void)step.generatorStep(video, GeneratorTerms{true, step.discriminator() != nullptr}, 1, false,
                             values);
  });
  step.zeroGrad(step.discriminator() != nullptr);
  const double tolerance = convolutionTolerance(dtype);
  out["cudnn"] = compat::cudnnVersion();
  out["tolerance"] = tolerance;
  Json rows = Json::array();
  double worst = 0;
  int failures = 0;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    // One line before each: a kernel that never returns is named by the last line.
    std::cerr << "conv-check " << i + 1 << "/" << shapes.size() << ": " << shapes[i].describe()
              << std::endl;
    const ConvolutionErrors e = compareWithFp32(shapes[i], device, dtype, 1000 + i);
    const bool ok = e.worst() <= tolerance;
    failures += ok ? 0 : 1;
    worst = std::max(worst, e.worst());
    rows.push_back({{"convolution", shapes[i].describe()},
                    {"output", e.output},
                    {"grad_input", e.grad_input},
                    {"grad_weight", e.grad_weight},
                    {"ok", ok}});
    if (!ok) {
      std::cerr << "tokenbench-trainer bench: " << shapes[i].describe() << ": relative error "
                << e.worst() << " against fp32 (tolerance " << tolerance << ")\n";
    }
  }
  out["convolutions"] = rows;
  out["worst"] = worst;
  out["failures"] = failures;
  out["ok"] = failures == 0;
  return failures == 0;
}

}  // namespace

int bench(const BenchArgs& args) {
  if (std::find(kWhats.begin(), kWhats.end(), args.what) == kWhats.end()) {
    std::string list;
    for (const auto& w : kWhats) list += (list.empty() ? "" : ", ") + w;
    const auto guess = core::closestMatch(args.what, kWhats);
    return fail(2,
                "unknown --what \"" + args.what + "\"" +
                    (guess ? " (did you mean \"" + *guess + "\"?)" : ""),
                "one of " + list);
  }
  if (args.what == "fid-features" || args.what == "fvd-features") return benchFeatures(args);
  core::RunConfig config;
  if (!loadConfigArgument(args.config, args.preset, config)) return 2;
  // Before any oneDNN work: the probe catches oneDNN's instruction-set line, printed once.
  (void)cpuFeatures();
  if (!args.device.empty()) config.train.device = args.device;
  if (!args.precision.empty())
    config.train.precision =
        core::parseChoiceOrThrow<core::Precision>("--precision", args.precision);
  const int threads = args.threads > 0 ? args.threads
                      : config.train.threads > 0
                          ? config.train.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  torch::set_num_threads(threads);
  const int batch = args.batch > 0 ? args.batch : config.train.batch_size;
  const std::string& what = args.what;
  // Only what a row runs is built: LPIPS for the generator's whole loss, the discriminator for
  // the GAN terms and its own step.
  const bool every_loss = what == "gen-step" || what == "train-step" || what == "conv-check";
  if (!every_loss) config.loss.perceptual_weight = 0;
  if (!every_loss && what != "discr-step") config.loss.adversarial_weight = 0;
  if (what == "discr-step" && config.loss.adversarial_weight <= 0) {
    return fail(2, "--what discr-step needs a discriminator, but loss.adversarial_weight is 0",
                "set loss.adversarial_weight > 0");
  }

  Json out;
  out["what"] = what;
  out["config"] = args.config.empty() ? args.preset : args.config;
  try {
    const torch::Device device =
        resolveTrainingDevice(config.train, args.device.empty() ? "train.device" : "--device");
    compat::setCurrentDevice(device);
    if (device.is_cuda()) compat::setCudnnBenchmark(true);
    torch::manual_seed(static_cast<std::uint64_t>(config.train.seed));
    TrainingStepSetup setup;
    setup.device = device;
    setup.missing_perceptual =
        args.random_perceptual ? MissingPerceptualWeights::Random : MissingPerceptualWeights::Error;
    TrainingStep step(config, setup);
    Tokenizer& tokenizer = *step.tokenizer();
    // Training steps see the training windows (data.train_crop, data.train_frames), as the
    // discriminator is built for them; encode and decode see whole clips.
    const auto& d = config.data;
    const bool window = what != "encode" && what != "decode";
    const std::int64_t frames = window && d.train_frames > 0 ? d.train_frames : d.num_frames;
    const std::int64_t size = window && d.train_crop > 0 ? d.train_crop : d.image_size;
    const torch::Tensor video = (torch::rand({batch, 3, frames, size, size}) * 2 - 1).to(device);
    const bool gan = step.discriminator() != nullptr;
    if (what == "conv-check") {
      const RuntimeInfo runtime = queryRuntime(device);
      out["device"] = runtime.device;
      out["device_name"] = runtime.device_name;
      out["torch"] = runtime.torch_version;
      out["precision"] = args.precision == "fp16" ? "fp16" : "bf16";
      out["batch"] = batch;
      out["input_shape"] = video.sizes().vec();
      const bool ok = checkConvolutions(step, video, device,
                                        args.precision == "fp16" ? at::kHalf : at::kBFloat16, out);
      std::cout << out.dump() << "\n";
      return ok ? 0 : 3;
    }

    // Encode and decode at train.precision too (the training steps take it from the config).
    const core::Precision precision = resolvePrecision(config.train.precision, device);
    const bool reduced_precision = precision != core::Precision::Fp32;
    const at::ScalarType reduced = precision == core::Precision::Fp16 ? at::kHalf : at::kBFloat16;
    Measurement m;
    int r1_steps = 0;
    StepValues values;
    if (what == "gen-step-recon" || what == "gen-step") {
      const GeneratorTerms terms{what == "gen-step", what == "gen-step" && gan};
      m = measure(device, args.warmup, args.steps, args.profile, [&] {
        step.zeroGrad(terms.gan);
        values.clear();
        (void)step.generatorStep(video, terms, 1, false, values);
      });
    } else if (what == "discr-step") {
      // The generator's detached reconstruction, as the training loop hands it over.
      GeneratorPass pass;
      {
        torch::NoGradGuard no_grad;
        pass.recon = tokenizer.forward(video).recon;
      }
      if (!step.discriminator()->takesVideo())
        pass.frame_pick = torch::randint(frames, {batch}, torch::kLong).to(device);
      const bool r1 = !args.no_r1 && config.loss.r1_weight > 0;
      r1_steps = r1 ? args.steps : 0;
      m = measure(device, args.warmup, args.steps, args.profile, [&] {
        step.discriminatorOptimizer()->zeroGrad();
        values.clear();
        step.discriminatorStep(video, pass, r1, 1, false, values);
      });
    } else if (what == "encode") {
      tokenizer.eval();
      c10::InferenceMode inference;
      compat::AutocastScope autocast(device.type(), reduced, reduced_precision);
      m = measure(device, args.warmup, args.steps, args.profile,
                  [&] { (void)tokenizer.tokenize(video); });
    } else if (what == "decode") {
      tokenizer.eval();
      c10::InferenceMode inference;
      compat::AutocastScope autocast(device.type(), reduced, reduced_precision);
      const torch::Tensor indices = tokenizer.tokenize(video);
      m = measure(device, args.warmup, args.steps, args.profile,
                  [&] { (void)tokenizer.decodeFromIndices(indices); });
    } else {  // train-step
      std::vector<std::pair<std::string, torch::Tensor>> ema;
      const auto& train = config.train;
      // Every repetition updates the EMA (steps ema_start_step + k x ema_update_every).
      std::int64_t n = 0;
      std::int64_t discr_step = 0;
      int timed = 0;
      const int first_timed = std::max(args.warmup, 1);
      m = measure(device, args.warmup, args.steps, args.profile, [&] {
        const bool r1 = gan && step.r1Due(discr_step);
        (void)step.run([&] { return video; }, gan, discr_step);
        step.optimizerStep(train.lr, train.discr_lr, gan);
        updateEma(ema, tokenizer, train, train.ema_start_step + n * train.ema_update_every);
        ++n;
        ++discr_step;
        if (timed++ >= first_timed && r1) ++r1_steps;
      });
      out["micro_batches"] = train.grad_accum;
    }
    const double med = median(m.seconds);
    const double gflops = m.flops / med / 1e9;
    const RuntimeInfo runtime = queryRuntime(device);
    out["device"] = runtime.device;
    out["device_name"] = runtime.device_name;
    if (device.is_cuda()) {
      out["peak_device_memory_mb"] =
          static_cast<double>(compat::peakAllocatedBytes(device)) / (1024.0 * 1024.0);
      const double peak_tflops = measureBf16GemmPeakTflops(device);
      out["bf16_gemm_peak_tflops"] = peak_tflops;
      out["mfu"] = gflops / (peak_tflops * 1e3);
    }
    const int micro_batches = what == "train-step" ? config.train.grad_accum : 1;
    out["clips_per_s"] = static_cast<double>(batch) * micro_batches / med;
    const PeakRates peak = device.is_cuda() ? PeakRates{} : measurePeakRates();
    const double peak_gflops = std::max(peak.gemm, peak.conv);
    out["median_s"] = med;
    out["min_s"] = *std::min_element(m.seconds.begin(), m.seconds.end());
    out["max_s"] = *std::max_element(m.seconds.begin(), m.seconds.end());
    out["seconds"] = m.seconds;
    out["steps"] = args.steps;
    out["warmup"] = args.warmup;
    out["threads"] = threads;
    out["batch"] = batch;
    out["input_shape"] = video.sizes().vec();
    out["peak_rss_mb"] = peakRssMb();
    out["flops_per_step"] = m.flops;
    out["gflops"] = gflops;
    if (!device.is_cuda()) {
      out["gemm_peak_gflops"] = peak.gemm;
      out["conv_peak_gflops"] = peak.conv;
      out["peak_fraction"] = gflops / peak_gflops;
    }
    out["blas"] = runtime.blas;
    out["tokenizer_params"] = countParameters(tokenizer);
    out["discriminator_params"] = gan ? countParameters(*step.discriminator()) : 0;
    out["perceptual"] = !step.lpips() ? "off"
                        : config.loss.lpips_backbone.empty() || config.loss.lpips_lin.empty()
                            ? "random"
                            : "weights";
    out["gan"] = gan && what != "gen-step-recon";
    out["r1_steps"] = r1_steps;
    out["precision"] = core::choiceName(precision);
    out["cpu"] = runtime.cpu;
  } catch (const UserError& e) {
    const bool config_problem =
        e.code() == "perceptual_weights_missing" || e.code() == "config_invalid" ||
        e.code() == "model_invalid" || e.code() == "perceptual_weights_invalid" ||
        e.code() == "precision_unsupported" || e.code() == "device_unavailable";
    std::string hint = e.hint();
    if (e.code() == "perceptual_weights_missing")
      hint += ", or pass --random-perceptual to time it with random weights";
    return fail(config_problem ? 2 : 1, e.what(), hint);
  } catch (const c10::Error& e) {
    return fail(1, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(1, e.what());
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
