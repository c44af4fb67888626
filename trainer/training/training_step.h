#pragma once
// TrainingStep: the models of a training run (tokenizer, discriminator, LPIPS, their AdamW
// optimisers and data-parallel gradient reducers) and the pieces of one optimisation step: the
// generator step, the discriminator step, gradient clipping, the optimiser updates and the EMA.
// The training loop and `tokenbench-trainer bench` call the same functions.

#include "core/run_config.h"
#include "trainer/convolution_check.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/models/discriminator.h"
#include "trainer/models/tokenizer.h"
#include "trainer/training/gan_losses.h"
#include "trainer/training/loss_scaler.h"
#include "trainer/training/sharded_adamw.h"
#include "trainer/user_error.h"

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer {

namespace distributed {
class GradientReducer;
class ParameterShards;
class RankGroup;
}  // namespace distributed
class FlatShardAdamW;

/// Named scalars of one step ("train/recon_loss", ...), in the order they were produced: 0-dim
/// tensors on the training device, so that a step on a GPU does not wait for each one; the
/// training loop reads them all at once with hostValues().
using StepValues = std::vector<std::pair<std::string, torch::Tensor>>;

/// `values` as numbers, with one device-to-host copy for all of them.
std::vector<std::pair<std::string, double>> hostValues(const StepValues& values);

/// What to do when loss.perceptual_weight > 0 but loss.lpips_backbone / loss.lpips_lin are not
/// both set.
enum class MissingPerceptualWeights {
  Warn,    ///< warn ("perceptual_off") and train without the perceptual loss (training)
  Error,   ///< UserError "perceptual_weights_missing" naming the keys (bench)
  Random,  ///< randomly initialised LPIPS: the same cost, meaningless values (bench)
};

struct TrainingStepSetup {
  distributed::RankGroup* group = nullptr;  ///< null on one process
  MissingPerceptualWeights missing_perceptual = MissingPerceptualWeights::Warn;
  /// Receives warnings (code, message); may be empty.
  std::function<void(const std::string&, const std::string&)> warn;
  torch::Device device = torch::kCPU;  ///< where the models, their state and batches live
};

/// One clip batch's generator pass, as the discriminator step needs it.
struct GeneratorPass {
  torch::Tensor recon;       ///< the reconstruction, detached, `[B, C, T, H, W]`
  torch::Tensor frame_pick;  ///< `[B]` frame judged per clip (frame discriminators; else undefined)
  torch::Tensor recon_loss;  ///< 0-dim, detached: the unweighted reconstruction loss (loss.recon)
  torch::Tensor loss;        ///< 0-dim, detached: the generator's whole loss
};

/// Gradient norms before clipping, 0-dim tensors on the training device.
struct GradientNorms {
  torch::Tensor tokenizer;
  torch::Tensor discriminator;  ///< undefined when the discriminator did not step
};

/// One optimisation step up to its update (TrainingStep::run): the step's values as device
/// tensors, each the mean over the step's micro-batches, and what decides whether to update.
struct StepResult {
  torch::Tensor recon_loss;  ///< the unweighted reconstruction loss (train/recon_loss)
  torch::Tensor loss;        ///< the generator's whole loss (train/loss)
  StepValues terms;          ///< every other term the micro-steps logged, in their order
  GradientNorms norms;       ///< before clipping
  bool overflow = false;     ///< loss scaling: a gradient overflowed, the step must be skipped
  double comm_s = 0;         ///< seconds spent waiting for the gradient averages

  /// train/recon_loss, train/loss, the terms, train/grad_norm and, when the discriminator
  /// stepped, train/discr_grad_norm: the order of a metrics row.
  StepValues values() const;
};

/// Which terms a generator step includes. The training loop takes every configured term; the
/// bench's gen-step-recon only the reconstruction and quantizer losses.
struct GeneratorTerms {
  bool perceptual = true;  ///< the LPIPS term, when an LPIPS network is set up
  bool gan = false;        ///< the adaptive-weighted hinge GAN term (needs the discriminator)
};

class TrainingStep {
 public:
  /// Builds the tokenizer (seeded by the caller's torch::manual_seed), its optimiser, the LPIPS
  /// network (when loss.perceptual_weight > 0), the discriminator and its optimiser (when
  /// loss.adversarial_weight > 0), in that order, all on setup.device; in a distributed run
  /// every rank takes rank 0's weights and gradients are averaged by reducers. With dynamic loss
  /// scaling (train.loss_scaling, on with fp16) each optimiser has a LossScaler. Throws
  /// UserError ("model_invalid", "config_invalid", "perceptual_weights_invalid",
  /// "perceptual_weights_missing", "precision_unsupported").
  TrainingStep(const core::RunConfig& config, const TrainingStepSetup& setup);
  ~TrainingStep();
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  const std::shared_ptr<Tokenizer>& tokenizer() const { return m_tokenizer; }
  /// The tokenizer's AdamW; null under distributed.strategy zero2 and zero3 (flatOptimizer()).
  ShardedAdamW* optimizer() { return m_gen.adamw.get(); }
  /// Null when loss.adversarial_weight is 0.
  const std::shared_ptr<Discriminator>& discriminator() const { return m_discr; }
  ShardedAdamW* discriminatorOptimizer() { return m_dis.adamw.get(); }
  /// Null when the perceptual loss is off.
  metrics::Lpips lpips() const { return m_lpips; }
  distributed::GradientReducer* reducer() { return m_gen.reducer.get(); }
  const torch::Device& device() const { return m_device; }
  /// Null when loss scaling is off; the discriminator's is null without a discriminator too.
  LossScaler* lossScaler() { return m_scaler.get(); }
  LossScaler* discriminatorLossScaler() { return m_discr_scaler.get(); }
  distributed::GradientReducer* discriminatorReducer() { return m_dis.reducer.get(); }
  gan::LecamAnchors& lecam() { return m_lecam; }

  /// distributed.strategy zero2 / zero3 (in a distributed run): the tokenizer's and the
  /// discriminator's parameters are ParameterShards, their optimisers FlatShardAdamW; null
  /// otherwise (and the discriminator's without a discriminator).
  distributed::ParameterShards* shards() { return m_gen.shards.get(); }
  distributed::ParameterShards* discriminatorShards() { return m_dis.shards.get(); }
  FlatShardAdamW* flatOptimizer() { return m_gen.flat_adamw.get(); }
  FlatShardAdamW* discriminatorFlatOptimizer() { return m_dis.flat_adamw.get(); }
  /// zero3: the parameters themselves are sharded (no rank holds a whole model between uses).
  bool parametersSharded() const;
  /// zero3: this rank's shares of the tokenizer's EMA (as shards()->shard(u)), empty before
  /// train.ema_start_step; updateShardedEma() keeps them.
  std::vector<torch::Tensor>& emaShares() { return m_ema_shares; }
  void updateShardedEma(const core::TrainConfig& train, std::int64_t step);

  /// Bytes this rank holds now, counted by storage (a storage shared by several tensors once):
  /// the values of the parameters (and of their shares), their gradients, and the optimiser
  /// state, of the tokenizer and the discriminator together.
  struct HeldBytes {
    std::int64_t parameters = 0;
    std::int64_t gradients = 0;
    std::int64_t optimizer_state = 0;
  };
  HeldBytes heldBytes() const;

  /// Clears the tokenizer's gradients (and the discriminator's when `gan`).
  void zeroGrad(bool gan);

  /// Whether the steps run under autocast (train.precision bf16 or fp16, or "auto" resolved to
  /// bf16).
  bool reducedPrecision() const { return m_autocast; }

  /// train.precision "auto" that chose bf16: every convolution one generator step runs on `x`
  /// (every configured term) is run in bf16 and in fp32 (convolution_check.h); a wrong one
  /// (oneDNN and cuDNN have computed some shapes wrongly in bf16) puts this step back to fp32.
  /// Returns that convolution and its error ("" when every one passed or nothing was checked).
  /// Leaves no gradient behind; `progress(done, total)` after each convolution.
  /// `low` is the reduced-precision convolution checked (tests give a wrong one).
  std::string checkAutoPrecision(const torch::Tensor& x,
                                 const std::function<void(int, int)>& progress,
                                 const ConvolutionFn& low = convolve);

  /// Generator forward on `x` `[B, C, T, H, W]` in [-1, 1], on the training device (under
  /// autocast when train.precision is "bf16" or "fp16"), its loss, and backward of loss /
  /// `accumulation` (micro-batches per step; times the loss scale when scaling) into the
  /// tokenizer's gradients (the discriminator's parameters collect none). With `arm_reducer` the
  /// data-parallel reducer averages the gradients during this backward. Appends the loss terms
  /// to `values`.
  GeneratorPass generatorStep(const torch::Tensor& x, const GeneratorTerms& terms, int accumulation,
                              bool arm_reducer, StepValues& values);

  /// Discriminator step on the real clips `x` and the generator's detached reconstruction:
  /// hinge loss, LeCAM when configured, and the R1 penalty when `r1` (scaled by loss.r1_every),
  /// backward of loss / `accumulation` (micro-batches per step) into the discriminator's gradients.
  void discriminatorStep(const torch::Tensor& x, const GeneratorPass& pass, bool r1,
                         int accumulation, bool arm_reducer, StepValues& values);

  /// Whether discriminator step `discr_step` (counted from loss.discr_start_step) applies R1.
  bool r1Due(std::int64_t discr_step) const;

  /// One micro-batch of an optimisation step: generator step with every configured term, then,
  /// when `gan`, the discriminator step. Gradients are scaled by 1 / train.grad_accum.
  /// Returns the micro-batch's values; pass.recon_loss and pass.loss in `pass` when given.
  StepValues microStep(const torch::Tensor& x, bool gan, std::int64_t discr_step, bool last_micro,
                       GeneratorPass* pass = nullptr);

  /// Everything of an optimisation step but the update, in the order every caller needs:
  /// gradients zeroed, one micro-step per micro-batch (train.grad_accum of them, each from
  /// `next_batch`, on the training device), the gradient averages, unscaling (loss scaling) and
  /// clipping. The caller then calls optimizerStep(), or skips the step (an overflow, values
  /// that are not finite) after zeroGrad().
  StepResult run(const std::function<torch::Tensor()>& next_batch, bool gan,
                 std::int64_t discr_step);

  /// Waits for the data-parallel gradient averages (under zero2/zero3 reduce-scattered into each
  /// rank's gradient shares); returns the seconds spent communicating.
  double finishReduction(bool gan);

  /// With loss scaling: divides the gradients by their loss scales (before clipping) and says
  /// whether any overflowed (inf/NaN), in which case the step must be skipped; the scalers are
  /// updated either way. Without loss scaling: false, and nothing changes.
  bool unscaleGradients(bool gan);

  /// Clips the gradients to train.grad_clip (no clipping when 0); returns the norms before
  /// clipping of the tokenizer's and (when `gan`) the discriminator's gradients, without waiting
  /// for the device (under zero2/zero3 the norm of every rank's shares together, which waits).
  GradientNorms clipGradients(bool gan);

  /// AdamW updates at the given rates (the discriminator's when `gan`); in a distributed run the
  /// updated parameters are shared.
  void optimizerStep(double rate, double discr_rate, bool gan);

 private:
  torch::Tensor discriminatorInput(const torch::Tensor& clips,
                                   const torch::Tensor& frame_pick) const;
  torch::Tensor generatorGanLoss(const torch::Tensor& fake);

  /// The loss backward starts from: `loss` x the scale when scaling.
  torch::Tensor scaledForBackward(const torch::Tensor& loss, const LossScaler* scaler) const;

  /// How one model's gradients are averaged and its parameters updated: ddp and zero1 (and one
  /// process) a GradientReducer and ShardedAdamW, zero2 and zero3 ParameterShards and
  /// FlatShardAdamW.
  struct Optimisation {
    std::unique_ptr<distributed::GradientReducer> reducer;  // ddp, zero1
    std::unique_ptr<ShardedAdamW> adamw;                    // one process, ddp, zero1
    std::unique_ptr<distributed::ParameterShards> shards;   // zero2, zero3
    std::unique_ptr<FlatShardAdamW> flat_adamw;             // zero2, zero3
    /// What loss scaling and clipping work on: the parameters, or the shares.
    std::vector<torch::Tensor> gradientHolders() const;
    void zeroGrad();
    void step(double rate, distributed::RankGroup* group);
  };
  Optimisation makeOptimisation(torch::nn::Module& model,
                                const std::vector<ModelLayer>& layers) const;

  const core::RunConfig& m_config;
  distributed::RankGroup* m_group;
  torch::Device m_device;
  c10::DeviceType m_autocast_device;
  at::ScalarType m_autocast_dtype;
  bool m_autocast;                             // not const: checkAutoPrecision may turn it off
  std::unique_ptr<LossScaler> m_scaler;        // null without loss scaling
  std::unique_ptr<LossScaler> m_discr_scaler;  // null without loss scaling or discriminator
  std::shared_ptr<Tokenizer> m_tokenizer;
  Optimisation m_gen;
  metrics::Lpips m_lpips{nullptr};
  std::shared_ptr<Discriminator> m_discr;
  Optimisation m_dis;
  std::vector<torch::Tensor> m_ema_shares;  // zero3
  gan::LecamAnchors m_lecam;
};

/// The EMA of the tokenizer's weights at optimiser step `step`: from train.ema_start_step a copy,
/// then every train.ema_update_every steps ema = beta x ema + (1 - beta) x weights. Does nothing
/// when train.ema is off or before the start step.
void updateEma(std::vector<std::pair<std::string, torch::Tensor>>& ema, const Tokenizer& tokenizer,
               const core::TrainConfig& train, std::int64_t step);
/// The same schedule for `averages` of `weights` (one average per weight tensor; empty before
/// the start step).
void updateEma(std::vector<torch::Tensor>& averages, const std::vector<torch::Tensor>& weights,
               const core::TrainConfig& train, std::int64_t step);

/// Frame frame_index[b] of each clip b: `[B, C, T, H, W]` -> `[B, C, H, W]` (4-D input as is).
torch::Tensor framesAt(const torch::Tensor& clips, const torch::Tensor& frame_index);

/// The named loss term of a tokenizer output; std::logic_error when there is none.
torch::Tensor lossTerm(const TokenizerOutput& out, const std::string& name);

}  // namespace tb::trainer
