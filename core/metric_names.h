#pragma once
// Names both processes spell: the scalar metrics the trainer writes (metrics.jsonl, TensorBoard)
// and the codes of its warning and error events (core/event_protocol.h). The window draws,
// summarises and raises alerts by these names; a name changed here changes on both sides.
//
// Metric names are `<group>/<name>`: "train/" per optimizer step, "valid/" per validation on
// held-out clips, "perf/" throughput and timings, "data/" loader counters.

#include <string_view>

namespace tb::core {

namespace metric {
inline constexpr std::string_view kTrainLoss = "train/loss";             ///< total generator loss
inline constexpr std::string_view kTrainReconLoss = "train/recon_loss";  ///< reconstruction term
inline constexpr std::string_view kTrainLr = "train/lr";                 ///< learning rate
inline constexpr std::string_view kValidReconLoss = "valid/recon_loss";
inline constexpr std::string_view kValidPsnr = "valid/psnr";    ///< dB, higher is better
inline constexpr std::string_view kValidSsim = "valid/ssim";    ///< [0, 1], higher is better
inline constexpr std::string_view kValidLpips = "valid/lpips";  ///< >= 0, lower is better
/// Fréchet distances on eval.clips held-out clips (lower is better); their N alongside.
inline constexpr std::string_view kValidRfid = "valid/rfid";
inline constexpr std::string_view kValidRfvd = "valid/rfvd";
inline constexpr std::string_view kEvalRfidSamples = "eval/rfid_samples";
inline constexpr std::string_view kEvalRfvdSamples = "eval/rfvd_samples";
/// Share of the codebook used on the held-out clips, [0, 1].
inline constexpr std::string_view kValidCodebookUsage = "valid/codebook_usage";
/// exp(entropy) of code use on the held-out clips, in codes.
inline constexpr std::string_view kValidPerplexity = "valid/perplexity";
inline constexpr std::string_view kPerfItPerS = "perf/it_per_s";  ///< optimizer steps per second
inline constexpr std::string_view kPerfStepS = "perf/step_s";     ///< seconds per step
inline constexpr std::string_view kPerfDataWaitS = "perf/data_wait_s";
inline constexpr std::string_view kPerfDataWaitFraction = "perf/data_wait_fraction";  ///< [0, 1]
inline constexpr std::string_view kDataSkippedFiles = "data/skipped_files";  ///< files so far
inline constexpr std::string_view kPerfCommS = "perf/comm_s";  ///< seconds per step in collectives
inline constexpr std::string_view kTrainGradNorm = "train/grad_norm";  ///< before clipping
inline constexpr std::string_view kTrainDiscrGradNorm = "train/discr_grad_norm";
/// Dynamic loss scale (fp16).
inline constexpr std::string_view kTrainLossScale = "train/loss_scale";
/// Steps skipped so far.
inline constexpr std::string_view kTrainOverflowSteps = "train/overflow_steps";
inline constexpr std::string_view kTrainPerceptualLoss = "train/perceptual_loss";  ///< LPIPS term
/// Generator's adversarial term.
inline constexpr std::string_view kTrainGanLoss = "train/gan_loss";
inline constexpr std::string_view kTrainAdaptiveWeight = "train/adaptive_weight";
inline constexpr std::string_view kTrainDiscrLoss = "train/discr_loss";
inline constexpr std::string_view kTrainLecam = "train/lecam";  ///< LeCam regulariser
/// Discriminator gradient penalty.
inline constexpr std::string_view kTrainR1Penalty = "train/r1_penalty";
inline constexpr std::string_view kTrainLogitsReal = "train/logits_real";
inline constexpr std::string_view kTrainLogitsFake = "train/logits_fake";
/// TensorBoard image tag of the validation sample GIF (not a metrics.jsonl column).
inline constexpr std::string_view kValidSamples = "valid/samples";
inline constexpr std::string_view kTrainGroup = "train/";
inline constexpr std::string_view kValidGroup = "valid/";
}  // namespace metric

/// Codes of warning events (WarningEvent::code) the window gives a meaning to.
namespace warning_code {
/// A step whose loss or gradients were not finite; the step was skipped.
inline constexpr std::string_view kNonfiniteStep = "nonfinite_step";
/// Too many non-finite steps: the run went back to its last checkpoint at a lower rate.
inline constexpr std::string_view kRollback = "rollback";
/// Unreadable files were skipped by the data loader.
inline constexpr std::string_view kDataSkipped = "data_skipped";
/// The data leaves no validation clip: validation, samples and rFID/rFVD are off.
inline constexpr std::string_view kNoValidation = "no_validation";
/// train.precision "auto" chose bf16, but a convolution of this model computed wrongly in bf16:
/// the run trains in fp32.
inline constexpr std::string_view kPrecisionFallback = "precision_fallback";
inline constexpr std::string_view kPerceptualOff = "perceptual_off";  ///< no LPIPS weights
inline constexpr std::string_view kReferenceBlas = "reference_blas";  ///< slow BLAS in use
/// A sample GIF was not written.
inline constexpr std::string_view kSampleFailed = "sample_failed";
inline constexpr std::string_view kCodebookCountsFailed = "codebook_counts_failed";
/// The classic VQ reference could not be fitted: the run goes on without its line.
inline constexpr std::string_view kReferenceCodecFailed = "reference_codec_failed";
inline constexpr std::string_view kTensorboardOff = "tensorboard_off";  ///< no TensorBoard events
}  // namespace warning_code

}  // namespace tb::core
