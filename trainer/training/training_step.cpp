#include "trainer/training/training_step.h"

#include "trainer/distributed/gradient_reducer.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/models/pixel_range.h"

#include "trainer/torch_compat.h"

#include <limits>
#include <stdexcept>

namespace tb::trainer {
namespace {

// AdamW over a module's parameters (weight decay only on weights with >= 2 dimensions), its
// state sharded over the ranks under distributed.strategy "zero1".
std::unique_ptr<ShardedAdamW> makeAdamW(const torch::nn::Module& module,
                                        const core::RunConfig& config,
                                        const distributed::RankGroup* group) {
  NamedTensors params;
  for (const auto& p : module.named_parameters()) params.emplace_back(p.key(), p.value());
  auto optimizer = std::make_unique<ShardedAdamW>(
      params, ShardedAdamW::Options{config.train.adam_beta1, config.train.adam_beta2, 1e-8,
                                    config.train.weight_decay});
  if (group && config.distributed.strategy == "zero1")
    optimizer->shard(group->rank(), group->worldSize());
  return optimizer;
}

// Every rank starts from rank 0's parameters and buffers.
void broadcastModule(torch::nn::Module& module, distributed::RankGroup& group) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> tensors;
  for (auto& p : module.parameters()) tensors.push_back(p.detach());
  for (auto& b : module.buffers()) tensors.push_back(b);
  for (auto& t : tensors) {
    std::vector<torch::Tensor> one{t.is_contiguous() ? t : t.contiguous()};
    group.broadcast(one, 0);
    if (!t.is_contiguous()) t.copy_(one[0]);
  }
}

// torch.nn.utils.clip_grad_norm_ with the norm as a tensor: LibTorch's C++ version returns a
// double, which makes the host wait for the device. The gradients are multiplied by
// min(1, max_norm / (norm + 1e-6)), exactly 1 when they are within the limit.
torch::Tensor clipNorm(const std::vector<torch::Tensor>& params, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (const auto& p : params) {
    if (p.grad().defined()) norms.push_back(p.grad().norm(2).to(torch::kFloat));
  }
  if (norms.empty()) return torch::zeros({}, torch::TensorOptions().device(params.empty() ? torch::kCPU : params[0].device()));
  const torch::Tensor total = torch::stack(norms).norm(2);
  if (max_norm > 0) {
    const torch::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
    for (const auto& p : params) {
      if (p.grad().defined()) p.grad().mul_(coef.to(p.grad().scalar_type()));
    }
  }
  return total;
}

// A frame index per clip, drawn from the CPU generator (so a run draws the same frames on any
// device), then moved to the clips' device.
torch::Tensor randomFrames(const torch::Tensor& clips) {
  return torch::randint(clips.size(2), {clips.size(0)}, torch::kLong).to(clips.device());
}

std::unique_ptr<LossScaler> makeScaler(const core::TrainConfig& train) {
  const bool on = train.loss_scaling == "on" || (train.loss_scaling == "auto" && train.precision == "fp16");
  if (!on) return nullptr;
  LossScaler::Options options;
  options.init_scale = train.loss_scale_init;
  options.growth_interval = train.loss_scale_growth_interval;
  return std::make_unique<LossScaler>(options);
}

}  // namespace

std::vector<std::pair<std::string, double>> hostValues(const StepValues& values) {
  std::vector<std::pair<std::string, double>> out;
  if (values.empty()) return out;
  std::vector<torch::Tensor> flat;
  for (const auto& [name, t] : values) flat.push_back(t.detach().reshape({}).to(torch::kDouble));
  const torch::Tensor host = torch::stack(flat).cpu();
  const double* v = host.data_ptr<double>();
  for (std::size_t i = 0; i < values.size(); ++i) out.emplace_back(values[i].first, v[i]);
  return out;
}

torch::Tensor lossTerm(const TokenizerOutput& out, const std::string& name) {
  for (const auto& [n, t] : out.losses) {
    if (n == name) return t;
  }
  throw std::logic_error("tokenizer output has no loss term \"" + name + "\"");
}

torch::Tensor framesAt(const torch::Tensor& clips, const torch::Tensor& frame_index) {
  if (clips.dim() == 4) return clips;
  const auto index = frame_index.view({-1, 1, 1, 1, 1})
                         .expand({clips.size(0), clips.size(1), 1, clips.size(3), clips.size(4)});
  return clips.gather(2, index).squeeze(2);
}

TrainingStep::TrainingStep(const core::RunConfig& config, const TrainingStepSetup& setup)
    : m_config(config),
      m_group(setup.group),
      m_device(setup.device),
      m_autocast_device(setup.device.type()),
      m_autocast_dtype(config.train.precision == "fp16" ? at::kHalf : at::kBFloat16),
      m_autocast(config.train.precision != "fp32") {
  if (config.train.precision == "fp16" && !m_device.is_cuda()) {
    throw UserError("precision_unsupported",
                    "train.precision \"fp16\" needs a CUDA device, but this run trains on " + m_device.str() +
                        " (CPU autocast is bf16 only)",
                    "use train.precision \"bf16\" or \"fp32\" on the CPU, or train on CUDA (train.device)");
  }
  try {
    m_tokenizer = makeTokenizer(config.model, config.data);
  } catch (const std::invalid_argument& e) {
    throw UserError("model_invalid", e.what(), "fix the model section of config.json");
  }
  m_tokenizer->setActivationCheckpointing(config.train.activation_checkpointing);
  m_tokenizer->train();
  // On the device before anything keeps a handle to a parameter (reducer hooks, optimiser).
  m_tokenizer->to(m_device);
  if (m_group) {
    broadcastModule(*m_tokenizer, *m_group);
    m_reducer = std::make_unique<distributed::GradientReducer>(*m_group, m_tokenizer->parameters(),
                                                               config.distributed.bucket_mb);
  }
  m_optimizer = makeAdamW(*m_tokenizer, config, m_group);
  m_scaler = makeScaler(config.train);

  const auto& loss = config.loss;
  const bool weights_set = !loss.lpips_backbone.empty() && !loss.lpips_lin.empty();
  if (loss.perceptual_weight > 0 && !weights_set &&
      setup.missing_perceptual != MissingPerceptualWeights::Random) {
    const std::string what = "loss.perceptual_weight is " + std::to_string(loss.perceptual_weight) +
                             " but loss.lpips_backbone and loss.lpips_lin are not both set";
    if (setup.missing_perceptual == MissingPerceptualWeights::Error) {
      throw UserError(
          "perceptual_weights_missing", what,
          "set loss.lpips_backbone and loss.lpips_lin, or set loss.perceptual_weight to 0");
    }
    if (setup.warn) setup.warn("perceptual_off", what + ": training without the perceptual loss");
  } else if (loss.perceptual_weight > 0) {
    const int smallest = loss.perceptual_net == "vgg" ? 16 : 31;
    if (config.data.image_size < smallest) {
      throw UserError(
          "config_invalid",
          "loss.perceptual_net \"" + loss.perceptual_net + "\" needs data.image_size >= " +
              std::to_string(smallest) + ", got " + std::to_string(config.data.image_size),
          "raise data.image_size, use perceptual_net \"vgg\", or set loss.perceptual_weight to 0");
    }
    try {
      const metrics::LpipsNet net = metrics::parseLpipsNet(loss.perceptual_net);
      if (weights_set) {
        m_lpips = metrics::loadLpips(net, loss.lpips_backbone, loss.lpips_lin);
      } else {
        m_lpips = metrics::Lpips(net);  // random weights: the cost of the real loss
        m_lpips->eval();
      }
      m_lpips->to(m_device);
    } catch (const std::exception& e) {
      throw UserError(
          "perceptual_weights_invalid", e.what(),
          "fix loss.lpips_backbone / loss.lpips_lin, or set loss.perceptual_weight to 0");
    }
  }
  if (loss.adversarial_weight > 0) {
    try {
      m_discr = makeDiscriminator(config.model, config.data);
    } catch (const std::invalid_argument& e) {
      throw UserError("model_invalid", e.what(), "fix model.discriminator in config.json");
    }
    m_discr->train();
    m_discr->to(m_device);
    if (m_group) {
      broadcastModule(*m_discr, *m_group);
      m_discr_reducer = std::make_unique<distributed::GradientReducer>(
          *m_group, m_discr->parameters(), config.distributed.bucket_mb);
    }
    m_discr_optimizer = makeAdamW(*m_discr, config, m_group);
    m_discr_scaler = makeScaler(config.train);
  }
}

TrainingStep::~TrainingStep() = default;

void TrainingStep::zeroGrad(bool gan) {
  m_optimizer->zeroGrad();
  if (gan && m_discr_optimizer) m_discr_optimizer->zeroGrad();
}

// Frame discriminators judge one frame per clip (`frame_pick[b]` of clip b); the video
// discriminator whole clips. Both in the pixel range of the tokenizer's weights (an imported
// magvit2-pytorch discriminator was trained on [0, 1] frames).
torch::Tensor TrainingStep::discriminatorInput(const torch::Tensor& clips,
                                               const torch::Tensor& frame_pick) const {
  const PixelRange range = parsePixelRange(m_config.model.pixel_range);
  if (m_discr->takesVideo()) return toPixelRange(clips, range);
  return toPixelRange(framesAt(clips, frame_pick), range);
}

// The generator's hinge GAN term on the reconstruction; the discriminator's own parameters
// collect no gradient from it.
torch::Tensor TrainingStep::generatorGanLoss(const torch::Tensor& fake) {
  for (auto& p : m_discr->parameters()) p.requires_grad_(false);
  const torch::Tensor g_loss = gan::hingeGeneratorLoss(m_discr->forward(fake));
  for (auto& p : m_discr->parameters()) p.requires_grad_(true);
  return g_loss;
}

torch::Tensor TrainingStep::scaledForBackward(const torch::Tensor& loss, const LossScaler* scaler) const {
  return scaler ? scaler->scaled(loss) : loss;
}

GeneratorPass TrainingStep::generatorStep(const torch::Tensor& x, const GeneratorTerms& terms,
                                          int accumulation, bool arm_reducer, StepValues& values) {
  const auto& lc = m_config.loss;
  const std::string recon_name = lc.recon == "mse" ? "recon_mse" : "recon_l1";
  const bool gan = terms.gan && m_discr;
  GeneratorPass pass;
  torch::Tensor recon, nll, quantizer, g_loss;
  {
    compat::AutocastScope autocast(m_autocast_device, m_autocast_dtype, m_autocast);
    const TokenizerOutput out = m_tokenizer->forward(x);
    recon = out.recon;
    nll = lc.recon_weight * lossTerm(out, recon_name);
    if (terms.perceptual && m_lpips) {
      // LPIPS on loss.perceptual_frames random frames per clip (magvit2-pytorch: one).
      torch::Tensor perceptual = torch::zeros({}, x.options().dtype(torch::kFloat));
      for (int k = 0; k < lc.perceptual_frames; ++k) {
        const torch::Tensor pick = randomFrames(x);
        perceptual = perceptual + m_lpips->forward(framesAt(recon, pick), framesAt(x, pick)).mean();
      }
      perceptual = perceptual / lc.perceptual_frames;
      values.emplace_back("train/perceptual_loss", perceptual.detach());
      nll = nll + lc.perceptual_weight * perceptual;
    }
    quantizer = lc.quantizer_weight * lossTerm(out, "quantizer");
    for (const auto& [name, t] : out.losses) values.emplace_back("train/" + name, t.detach());
    pass.recon_loss = lossTerm(out, recon_name).detach();
    if (gan) {
      pass.frame_pick = m_discr->takesVideo() ? torch::Tensor() : randomFrames(x);
      g_loss = generatorGanLoss(discriminatorInput(recon, pass.frame_pick));
    }
    pass.recon = recon.detach();
  }
  const double scale = m_scaler ? m_scaler->scale() : 1.0;
  torch::Tensor weight = torch::ones({}, x.options().dtype(torch::kFloat));
  torch::Tensor recon_grad;  // d loss / d recon when the backward starts at the reconstruction
  if (gan && lc.adaptive_weight) {
    // VQGAN's adaptive weight compares |d nll / d w| and |d gan / d w| at the last decoder weight
    // w. Both come from the gradients at the reconstruction, each computed once; the backward of
    // the whole loss then starts at the reconstruction with their weighted sum. The perceptual
    // network and the discriminator are differentiated once each, not twice (the reference
    // computes both gradients at w through them and then runs the whole backward again).
    auto atRecon = [&](const torch::Tensor& term) {
      const torch::Tensor g =
          torch::autograd::grad({term}, {recon}, {}, false, false, /*allow_unused=*/true)[0];
      return g.defined() ? g : torch::zeros_like(recon);
    };
    const torch::Tensor nll_grad = atRecon(nll);
    const torch::Tensor gan_grad = atRecon(g_loss);
    std::function<void(std::vector<torch::Tensor>&)> average;
    if (m_group)
      average = [this](std::vector<torch::Tensor>& grads) { m_group->allReduceMean(grads); };
    weight =
        gan::adaptiveWeightAtOutput(recon, nll_grad, gan_grad, m_tokenizer->lastDecoderWeight(),
                                    lc.adaptive_weight_max, average);
    recon_grad = nll_grad + (lc.adversarial_weight * weight).to(nll_grad.scalar_type()) * gan_grad;
  }
  if (gan) {
    values.emplace_back("train/gan_loss", g_loss.detach());
    values.emplace_back("train/adaptive_weight", weight);
  }
  // Data parallel: gradients are averaged over the ranks once per optimiser step, during the
  // backward pass of the last micro-step.
  if (m_reducer && arm_reducer) m_reducer->arm();
  if (recon_grad.defined()) {
    pass.loss = (nll + quantizer + lc.adversarial_weight * weight * g_loss).detach();
    std::vector<torch::Tensor> roots = {recon}, grads = {recon_grad * (scale / accumulation)};
    if (quantizer.requires_grad()) {
      roots.push_back(quantizer);
      grads.push_back(torch::full_like(quantizer, scale / accumulation));
    }
    torch::autograd::backward(roots, grads);
    return pass;
  }
  torch::Tensor loss = nll + quantizer;
  if (gan) loss = loss + lc.adversarial_weight * g_loss;
  (scaledForBackward(loss, m_scaler.get()) / accumulation).backward();
  pass.loss = loss.detach();
  return pass;
}

bool TrainingStep::r1Due(std::int64_t discr_step) const {
  const auto& loss = m_config.loss;
  return loss.r1_weight > 0 && discr_step % loss.r1_every == 0;
}

// Hinge loss on real and reconstructed inputs, plus LeCAM and, every loss.r1_every
// discriminator steps, the R1 penalty scaled by r1_every (lazy regularisation, as StyleGAN2).
void TrainingStep::discriminatorStep(const torch::Tensor& x, const GeneratorPass& pass, bool r1,
                                     int accumulation, bool arm_reducer, StepValues& values) {
  const auto& loss = m_config.loss;
  if (m_discr_reducer && arm_reducer) m_discr_reducer->arm();
  compat::AutocastScope autocast(m_autocast_device, m_autocast_dtype, m_autocast);
  r1 = r1 && loss.r1_weight > 0;
  const torch::Tensor real = discriminatorInput(x, pass.frame_pick).detach().requires_grad_(r1);
  const torch::Tensor real_logits = m_discr->forward(real);
  const torch::Tensor fake_logits =
      m_discr->forward(discriminatorInput(pass.recon, pass.frame_pick).detach());
  torch::Tensor d_loss = gan::hingeDiscriminatorLoss(real_logits, fake_logits);
  values.emplace_back("train/discr_loss", d_loss.detach());
  if (loss.lecam_weight > 0) {
    std::vector<torch::Tensor> means = {real_logits.detach().mean().reshape({1}).to(torch::kFloat),
                                        fake_logits.detach().mean().reshape({1}).to(torch::kFloat)};
    if (m_group) m_group->allReduceMean(means);
    m_lecam.update(means[0].item<double>(), means[1].item<double>(), loss.lecam_decay);
    const torch::Tensor lecam = m_lecam.penalty(real_logits, fake_logits);
    values.emplace_back("train/lecam", lecam.detach());
    d_loss = d_loss + loss.lecam_weight * lecam;
  }
  if (r1) {
    const torch::Tensor penalty = gan::r1Penalty(real_logits, real);
    values.emplace_back("train/r1_penalty", penalty.detach());
    d_loss = d_loss + loss.r1_weight * loss.r1_every * penalty;
  }
  values.emplace_back("train/logits_real", real_logits.detach().mean());
  values.emplace_back("train/logits_fake", fake_logits.detach().mean());
  (scaledForBackward(d_loss, m_discr_scaler.get()) / accumulation).backward();
}

StepValues TrainingStep::microStep(const torch::Tensor& x, bool gan, std::int64_t discr_step,
                                   bool last_micro, GeneratorPass* pass_out) {
  const int scale = m_config.train.grad_accum;
  StepValues values;
  gan = gan && m_discr;
  const GeneratorPass pass = generatorStep(x, GeneratorTerms{true, gan}, scale, last_micro, values);
  if (gan) discriminatorStep(x, pass, r1Due(discr_step), scale, last_micro, values);
  if (pass_out) *pass_out = pass;
  return values;
}

double TrainingStep::finishReduction(bool gan) {
  if (!m_reducer) return 0;
  m_reducer->finish();
  double seconds = m_reducer->lastFinishS() + m_reducer->lastLaunchS();
  if (gan && m_discr_reducer) {
    m_discr_reducer->finish();
    seconds += m_discr_reducer->lastFinishS() + m_discr_reducer->lastLaunchS();
  }
  return seconds;
}

bool TrainingStep::unscaleGradients(bool gan) {
  bool overflow = false;
  if (m_scaler) overflow = m_scaler->unscale(m_optimizer->parameters());
  const bool discr = gan && m_discr_scaler;
  bool discr_overflow = false;
  if (discr) discr_overflow = m_discr_scaler->unscale(m_discr_optimizer->parameters());
  // The step of both is skipped together, so each scaler sees its own overflow only.
  if (m_scaler) m_scaler->update(overflow);
  if (discr) m_discr_scaler->update(discr_overflow);
  return overflow || discr_overflow;
}

GradientNorms TrainingStep::clipGradients(bool gan) {
  const double max_norm = m_config.train.grad_clip;
  GradientNorms norms;
  norms.tokenizer = clipNorm(m_optimizer->parameters(), max_norm);
  if (gan && m_discr_optimizer) norms.discriminator = clipNorm(m_discr_optimizer->parameters(), max_norm);
  return norms;
}

void TrainingStep::optimizerStep(double rate, double discr_rate, bool gan) {
  gan = gan && m_discr_optimizer;
  m_optimizer->step(rate);
  if (gan) m_discr_optimizer->step(discr_rate);
  if (m_group) {
    m_optimizer->shareUpdatedParameters(*m_group);
    if (gan) m_discr_optimizer->shareUpdatedParameters(*m_group);
  }
}

void updateEma(std::vector<std::pair<std::string, torch::Tensor>>& ema, const Tokenizer& tokenizer,
               const core::TrainConfig& train, std::int64_t step) {
  if (!train.ema || step < train.ema_start_step) return;
  torch::NoGradGuard no_grad;
  const auto params = tokenizer.named_parameters();
  if (ema.empty() || step == train.ema_start_step) {
    ema.clear();
    for (const auto& p : params) ema.emplace_back(p.key(), p.value().detach().clone());
    return;
  }
  if (step % train.ema_update_every != 0) return;
  for (auto& [name, avg] : ema)
    avg.mul_(train.ema_beta).add_(params[name].detach(), 1.0 - train.ema_beta);
}

}  // namespace tb::trainer
