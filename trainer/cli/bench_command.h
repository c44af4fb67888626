#pragma once
// `tokenbench-trainer bench`: times one piece of a training step with the training code itself
// and prints one JSON object on stdout. One measurement per process, so that the peak resident
// set size belongs to that measurement alone (bench/run_perf_bench.sh runs the rows).

#include <string>

namespace tb::trainer::cli {

struct BenchArgs {
  std::string config;  ///< configuration file, "-" for standard input, or empty
  std::string preset;  ///< preset name instead of a file, or empty
  /// gen-step-recon  generator forward + backward of the reconstruction and quantizer losses
  /// gen-step        generator step with every configured loss (perceptual, adaptive-weighted GAN)
  /// discr-step      discriminator step with its R1 gradient penalty (without: --no-r1)
  /// encode          video -> indices, inference mode
  /// decode          indices -> video, inference mode
  /// train-step      one whole optimisation step: train.grad_accum micro-batches of generator and
  ///                 discriminator steps, gradient clipping, both AdamW updates, the EMA
  /// conv-check      not a timing: every convolution gen-step runs, forward and backward at
  ///                 --precision (bf16 unless fp16) against fp32 on the device
  /// fid-features    InceptionV3 of rFID over --batch 256 px images (images_per_s), no config
  /// fvd-features    I3D of rFVD over --batch 16-frame 128 px clips (clips_per_s), no config
  std::string what;
  int batch = 0;                   ///< clips per micro-batch; 0: train.batch_size
  int steps = 3;                   ///< timed repetitions (median, min, max reported)
  int warmup = 1;                  ///< untimed repetitions first
  int threads = 0;                 ///< intra-op threads; 0: train.threads, else all cores
  bool random_perceptual = false;  ///< random LPIPS weights when none are configured
  bool no_r1 = false;              ///< discr-step without the gradient penalty
  bool profile = false;   ///< on stderr: self time per op and per op and shapes of one extra
                          ///< repetition, and the oneDNN kernels of another (bench_profile.h)
  std::string device;     ///< train.device value (auto, cpu, cuda, cuda:N); empty: the config's
  std::string precision;  ///< train.precision (fp32, bf16, fp16); empty: the config's
};

/// --what fid-features / fvd-features (bench_features.cpp): what, device, threads, batch,
/// input_shape, median_s, min_s, max_s, images_per_s or clips_per_s, peak_rss_mb.
int benchFeatures(const BenchArgs& args);

/// Runs the benchmark. Exit 0 with the JSON object on stdout; 2 for an invalid configuration, an
/// unknown --what, missing LPIPS weights (without --random-perceptual) or discr-step without a
/// discriminator (message on stderr naming the key or value); 1 on other failures.
///
/// JSON fields: what, config, median_s, min_s, max_s, seconds, steps, warmup, threads, batch,
/// input_shape [B, C, T, H, W], peak_rss_mb (the process's peak resident set, MiB),
/// flops_per_step (multiply-adds x 2 of every convolution, its backward, mm/addmm/bmm/baddbmm,
/// counted from the shapes of the ops one untimed repetition ran), gflops (flops_per_step /
/// median_s / 1e9), gemm_peak_gflops (best of five 1024x1024 float torch::mm at these threads),
/// peak_fraction (gflops / gemm_peak_gflops), blas, tokenizer_params, discriminator_params,
/// perceptual ("off", "weights", "random"), gan, r1_steps (timed repetitions that applied R1),
/// device, device_name, precision (as it ran: "auto" resolved), cpu (the CPU's vector and matrix
/// units and oneDNN's instruction set, CpuFeatures::summary), clips_per_s (batch x micro-batches
/// / median_s). encode and decode run under autocast too when the precision is bf16 or fp16.
/// On a CUDA device the times are CUDA-event times of each repetition, and the JSON adds
/// bf16_gemm_peak_tflops (an 8192^3 bf16 torch::mm after warm-up, best of five), mfu (model FLOPs
/// utilisation: flops_per_step / median_s / that peak) and peak_device_memory_mb.
///
/// conv-check prints what, config, device, device_name, torch, precision, batch, input_shape,
/// cudnn (the loaded library's version, empty without one), tolerance, convolutions (one row per
/// distinct convolution: its shapes and arguments, the relative errors of output, grad_input and
/// grad_weight, ok), worst, failures, ok; it exits 3 when a convolution is outside the tolerance.
int bench(const BenchArgs& args);

}  // namespace tb::trainer::cli
