// Over 600 lines on purpose: one class, TrainingStep, the whole protocol of a step in one place.
#include "trainer/training/training_step.h"

#include "core/metric_names.h"
#include "trainer/distributed/gradient_reducer.h"
#include "trainer/distributed/parameter_shards.h"
#include "trainer/distributed/rank_group.h"
#include "trainer/models/pixel_range.h"
#include "trainer/training/flat_shard_adamw.h"

#include "trainer/torch_compat.h"
#include "trainer/training_device.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

namespace tb::trainer {
namespace {

NamedTensors namedParameters(const torch::nn::Module& module) {
  NamedTensors params;
  for (const auto& p : module.named_parameters()) params.emplace_back(p.key(), p.value());
  return params;
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
// min(1, max_norm / (norm + 1e-6)), exactly 1 when they are within the limit. With `shares_of`
// the gradients are this rank's shares of the whole (zero2, zero3): the norm is that of every
// rank's together.
torch::Tensor clipNorm(const std::vector<torch::Tensor>& params, double max_norm,
                       distributed::RankGroup* shares_of = nullptr) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (const auto& p : params) {
    if (p.grad().defined()) norms.push_back(p.grad().norm(2).to(torch::kFloat));
  }
  const auto device = params.empty() ? torch::Device(torch::kCPU) : params[0].device();
  torch::Tensor total = norms.empty() ? torch::zeros({}, torch::TensorOptions().device(device))
                                      : torch::stack(norms).norm(2);
  if (shares_of != nullptr) {
    std::vector<torch::Tensor> squares{total.pow(2).reshape({1})};
    shares_of->allReduceSum(squares);
    total = squares[0].sqrt().reshape({});
  }
  if (norms.empty()) return total;
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

// Frees the units a ParameterShards gathered for a forward and backward (zero3), on every way
// out of a step.
class ReleaseUnits {
 public:
  explicit ReleaseUnits(std::initializer_list<distributed::ParameterShards*> shards)
      : m_shards(shards) {}
  ~ReleaseUnits() {
    for (auto* s : m_shards) {
      if (s) s->release();
    }
  }
  ReleaseUnits(const ReleaseUnits&) = delete;
  ReleaseUnits& operator=(const ReleaseUnits&) = delete;

 private:
  std::vector<distributed::ParameterShards*> m_shards;
};

// Bytes of distinct storages: views of one buffer count once, freed storages as 0.
class StorageBytes {
 public:
  void add(const torch::Tensor& t) {
    if (!t.defined() || !t.has_storage()) return;
    const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
    if (m_seen.insert(storage).second) m_bytes += static_cast<std::int64_t>(storage->nbytes());
  }
  std::int64_t bytes() const { return m_bytes; }

 private:
  std::set<const c10::StorageImpl*> m_seen;
  std::int64_t m_bytes = 0;
};

std::unique_ptr<LossScaler> makeScaler(const core::TrainConfig& train) {
  const bool on =
      train.loss_scaling == core::LossScaling::On ||
      (train.loss_scaling == core::LossScaling::Auto && train.precision == core::Precision::Fp16);
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
      m_autocast_dtype(config.train.precision == core::Precision::Fp16 ? at::kHalf : at::kBFloat16),
      m_autocast(resolvePrecision(config.train.precision, setup.device) != core::Precision::Fp32) {
  if (config.train.precision == core::Precision::Fp16 && !m_device.is_cuda()) {
    throw UserError(
        "precision_unsupported",
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
  if (m_group) broadcastModule(*m_tokenizer, *m_group);
  m_gen = makeOptimisation(*m_tokenizer, m_tokenizer->layers());
  if (parametersSharded()) m_tokenizer->setLayerRunner(m_gen.shards->runner());
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
    const int smallest = loss.perceptual_net == core::LpipsNet::Vgg ? 16 : 31;
    if (config.data.image_size < smallest) {
      throw UserError(
          "config_invalid",
          std::string("loss.perceptual_net \"") + core::choiceName(loss.perceptual_net) +
              "\" needs data.image_size >= " + std::to_string(smallest) + ", got " +
              std::to_string(config.data.image_size),
          "raise data.image_size, use perceptual_net \"vgg\", or set loss.perceptual_weight to 0");
    }
    try {
      const metrics::LpipsNet net = loss.perceptual_net;
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
    if (m_group) broadcastModule(*m_discr, *m_group);
    m_dis = makeOptimisation(*m_discr, m_discr->layers());
    if (parametersSharded()) m_discr->setLayerRunner(m_dis.shards->runner());
    m_discr_scaler = makeScaler(config.train);
  }
}

TrainingStep::~TrainingStep() {
  // The models may outlive this step (the training loop shares them): no runner of its shards.
  m_tokenizer->setLayerRunner({});
  if (m_discr) m_discr->setLayerRunner({});
}

// AdamW over a module's parameters (weight decay only on weights with >= 2 dimensions). In a
// distributed run: ddp and zero1 average gradients with a GradientReducer (zero1 shards the
// AdamW state by parameter); zero2 and zero3 shard gradients and state in flat shares
// (ParameterShards, FlatShardAdamW), zero3 the parameters too.
TrainingStep::Optimisation TrainingStep::makeOptimisation(
    torch::nn::Module& model, const std::vector<ModelLayer>& layers) const {
  const auto& dist = m_config.distributed;
  const auto& train = m_config.train;
  const ShardedAdamW::Options adamw{train.adam_beta1, train.adam_beta2, 1e-8, train.weight_decay};
  Optimisation out;
  if (m_group &&
      (dist.strategy == core::Strategy::Zero2 || dist.strategy == core::Strategy::Zero3)) {
    distributed::ParameterShards::Options options;
    options.stage = dist.strategy == core::Strategy::Zero3
                        ? distributed::ParameterShards::Stage::Zero3
                        : distributed::ParameterShards::Stage::Zero2;
    options.bucket_mb = dist.bucket_mb;
    options.unit_types = dist.zero3_units;
    out.shards = std::make_unique<distributed::ParameterShards>(*m_group, namedParameters(model),
                                                                layers, options);
    out.flat_adamw = std::make_unique<FlatShardAdamW>(*out.shards, adamw);
    return out;
  }
  if (m_group)
    out.reducer = std::make_unique<distributed::GradientReducer>(*m_group, model.parameters(),
                                                                 dist.bucket_mb);
  out.adamw = std::make_unique<ShardedAdamW>(namedParameters(model), adamw);
  if (m_group && dist.strategy == core::Strategy::Zero1)
    out.adamw->shard(m_group->rank(), m_group->worldSize());
  return out;
}

std::vector<torch::Tensor> TrainingStep::Optimisation::gradientHolders() const {
  if (flat_adamw) return flat_adamw->shares();
  return adamw ? adamw->parameters() : std::vector<torch::Tensor>();
}

void TrainingStep::Optimisation::zeroGrad() {
  if (adamw) adamw->zeroGrad();
  if (flat_adamw) flat_adamw->zeroGrad();
}

void TrainingStep::Optimisation::step(double rate, distributed::RankGroup* group) {
  if (flat_adamw) {
    flat_adamw->step(rate);  // and the shares go where they are needed
    return;
  }
  adamw->step(rate);
  if (group) adamw->shareUpdatedParameters(*group);
}

bool TrainingStep::parametersSharded() const {
  return m_gen.shards && m_gen.shards->stage() == distributed::ParameterShards::Stage::Zero3;
}

void TrainingStep::zeroGrad(bool gan) {
  m_gen.zeroGrad();
  if (gan && m_discr) m_dis.zeroGrad();
}

// Frame discriminators judge one frame per clip (`frame_pick[b]` of clip b); the video
// discriminator whole clips. Both in the pixel range of the tokenizer's weights (an imported
// magvit2-pytorch discriminator was trained on [0, 1] frames).
torch::Tensor TrainingStep::discriminatorInput(const torch::Tensor& clips,
                                               const torch::Tensor& frame_pick) const {
  const PixelRange range = m_config.model.pixel_range;
  if (m_discr->takesVideo()) return toPixelRange(clips, range);
  return toPixelRange(framesAt(clips, frame_pick), range);
}

// The generator's hinge GAN term on the reconstruction; the discriminator's own parameters
// collect no gradient from it.
torch::Tensor TrainingStep::generatorGanLoss(const torch::Tensor& fake) {
  if (m_dis.shards) m_dis.shards->beginForward();
  for (auto& p : m_discr->parameters()) p.requires_grad_(false);
  const torch::Tensor g_loss = gan::hingeGeneratorLoss(m_discr->forward(fake));
  for (auto& p : m_discr->parameters()) p.requires_grad_(true);
  return g_loss;
}

torch::Tensor TrainingStep::scaledForBackward(const torch::Tensor& loss,
                                              const LossScaler* scaler) const {
  return scaler ? scaler->scaled(loss) : loss;
}

GeneratorPass TrainingStep::generatorStep(const torch::Tensor& x, const GeneratorTerms& terms,
                                          int accumulation, bool arm_reducer, StepValues& values) {
  const auto& lc = m_config.loss;
  const std::string recon_name = lc.recon == core::ReconLoss::Mse ? "recon_mse" : "recon_l1";
  const bool gan = terms.gan && m_discr;
  GeneratorPass pass;
  torch::Tensor recon, nll, quantizer, g_loss;
  const ReleaseUnits release{m_gen.shards.get(), m_dis.shards.get()};
  if (m_gen.shards) m_gen.shards->beginForward();
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
      values.emplace_back(std::string(core::metric::kTrainPerceptualLoss), perceptual.detach());
      nll = nll + lc.perceptual_weight * perceptual;
    }
    quantizer = lc.quantizer_weight * lossTerm(out, "quantizer");
    for (const auto& [name, t] : out.losses)
      values.emplace_back(std::string(core::metric::kTrainGroup) + name, t.detach());
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
    values.emplace_back(std::string(core::metric::kTrainGanLoss), g_loss.detach());
    values.emplace_back(std::string(core::metric::kTrainAdaptiveWeight), weight);
  }
  // Data parallel: gradients are averaged over the ranks once per optimiser step, during the
  // backward pass of the last micro-step; sharded, they are reduce-scattered in every one.
  if (m_gen.reducer && arm_reducer) m_gen.reducer->arm();
  if (m_gen.shards) m_gen.shards->arm();
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

std::string TrainingStep::checkAutoPrecision(const torch::Tensor& x,
                                             const std::function<void(int, int)>& progress,
                                             const ConvolutionFn& low) {
  if (m_config.train.precision != core::Precision::Auto || !m_autocast) return {};
  const bool gan = m_discr != nullptr;
  // The recording step runs in training mode: a VQ's EMA codebook and usage counters move in
  // it. They are put back, so that the run starts from the weights it would start from in fp32.
  std::vector<torch::Tensor> state;
  {
    torch::NoGradGuard no_grad;
    for (const auto& t : m_tokenizer->parameters()) state.push_back(t.detach().clone());
    for (const auto& t : m_tokenizer->buffers()) state.push_back(t.detach().clone());
  }
  const std::vector<ConvolutionShape> shapes = recordConvolutions([&] {
    StepValues values;
    zeroGrad(gan);
    (void)generatorStep(x, GeneratorTerms{true, gan}, 1, false, values);
  });
  zeroGrad(gan);
  {
    torch::NoGradGuard no_grad;
    std::size_t i = 0;
    for (auto& t : m_tokenizer->parameters()) t.copy_(state[i++]);
    for (auto& t : m_tokenizer->buffers()) t.copy_(state[i++]);
  }
  const double tolerance = convolutionTolerance(m_autocast_dtype);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const ConvolutionErrors e =
        compareWithFp32(shapes[i], m_device, m_autocast_dtype, 1000 + i, low);
    if (progress) progress(static_cast<int>(i + 1), static_cast<int>(shapes.size()));
    if (!(e.worst() <= tolerance)) {  // NaN fails too
      m_autocast = false;
      std::ostringstream s;
      s << shapes[i].describe() << ": relative error " << e.worst() << " in bf16 against fp32 "
        << "(tolerance " << tolerance << ")";
      return s.str();
    }
  }
  return {};
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
  if (m_dis.reducer && arm_reducer) m_dis.reducer->arm();
  const ReleaseUnits release{m_dis.shards.get()};
  if (m_dis.shards) {
    m_dis.shards->arm();
    m_dis.shards->beginForward();
  }
  compat::AutocastScope autocast(m_autocast_device, m_autocast_dtype, m_autocast);
  r1 = r1 && loss.r1_weight > 0;
  const torch::Tensor real = discriminatorInput(x, pass.frame_pick).detach().requires_grad_(r1);
  const torch::Tensor real_logits = m_discr->forward(real);
  const torch::Tensor fake_logits =
      m_discr->forward(discriminatorInput(pass.recon, pass.frame_pick).detach());
  torch::Tensor d_loss = gan::hingeDiscriminatorLoss(real_logits, fake_logits);
  values.emplace_back(std::string(core::metric::kTrainDiscrLoss), d_loss.detach());
  if (loss.lecam_weight > 0) {
    std::vector<torch::Tensor> means = {real_logits.detach().mean().reshape({1}).to(torch::kFloat),
                                        fake_logits.detach().mean().reshape({1}).to(torch::kFloat)};
    if (m_group) m_group->allReduceMean(means);
    m_lecam.update(means[0].item<double>(), means[1].item<double>(), loss.lecam_decay);
    const torch::Tensor lecam = m_lecam.penalty(real_logits, fake_logits);
    values.emplace_back(std::string(core::metric::kTrainLecam), lecam.detach());
    d_loss = d_loss + loss.lecam_weight * lecam;
  }
  if (r1) {
    const torch::Tensor penalty = gan::r1Penalty(real_logits, real);
    values.emplace_back(std::string(core::metric::kTrainR1Penalty), penalty.detach());
    d_loss = d_loss + loss.r1_weight * loss.r1_every * penalty;
  }
  values.emplace_back(std::string(core::metric::kTrainLogitsReal), real_logits.detach().mean());
  values.emplace_back(std::string(core::metric::kTrainLogitsFake), fake_logits.detach().mean());
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

StepValues StepResult::values() const {
  StepValues out;
  out.emplace_back(std::string(core::metric::kTrainReconLoss), recon_loss);
  out.emplace_back(std::string(core::metric::kTrainLoss), loss);
  out.insert(out.end(), terms.begin(), terms.end());
  out.emplace_back(std::string(core::metric::kTrainGradNorm), norms.tokenizer);
  if (norms.discriminator.defined())
    out.emplace_back(std::string(core::metric::kTrainDiscrGradNorm), norms.discriminator);
  return out;
}

StepResult TrainingStep::run(const std::function<torch::Tensor()>& next_batch, bool gan,
                             std::int64_t discr_step) {
  const int micro_batches = m_config.train.grad_accum;
  zeroGrad(gan);
  StepResult result;
  // Each value's share of the step's mean, summed over the micro-batches.
  auto accumulate = [&](torch::Tensor& sum, const torch::Tensor& v) {
    const torch::Tensor share = v / micro_batches;
    sum = sum.defined() ? sum + share : share;
  };
  for (int micro = 0; micro < micro_batches; ++micro) {
    const torch::Tensor clips = next_batch();
    GeneratorPass pass;
    const StepValues micro_values =
        microStep(clips, gan, discr_step, micro + 1 == micro_batches, &pass);
    accumulate(result.recon_loss, pass.recon_loss);
    accumulate(result.loss, pass.loss);
    for (const auto& [name, v] : micro_values) {
      auto it = std::find_if(result.terms.begin(), result.terms.end(),
                             [&](const auto& e) { return e.first == name; });
      if (it == result.terms.end())
        it = result.terms.emplace(result.terms.end(), name, torch::Tensor());
      accumulate(it->second, v);
    }
  }
  result.comm_s = finishReduction(gan);
  result.overflow = unscaleGradients(gan);
  result.norms = clipGradients(gan);
  return result;
}

double TrainingStep::finishReduction(bool gan) {
  double seconds = 0;
  for (Optimisation* o : {&m_gen, gan ? &m_dis : nullptr}) {
    if (o == nullptr) continue;
    if (o->reducer) {
      o->reducer->finish();
      seconds += o->reducer->lastFinishS() + o->reducer->lastLaunchS();
    }
    if (o->shards) {
      o->shards->finish();
      seconds += o->shards->lastCommS();
    }
  }
  return seconds;
}

bool TrainingStep::unscaleGradients(bool gan) {
  bool overflow = false;
  if (m_scaler) overflow = m_scaler->unscale(m_gen.gradientHolders());
  const bool discr = gan && m_discr_scaler;
  bool discr_overflow = false;
  if (discr) discr_overflow = m_discr_scaler->unscale(m_dis.gradientHolders());
  if (m_gen.shards && (m_scaler || discr)) {
    // Each rank unscaled its own shares: an overflow in any of them skips the step on every rank.
    std::vector<torch::Tensor> flags{
        torch::tensor({overflow ? 1.0 : 0.0, discr_overflow ? 1.0 : 0.0})};
    m_group->allReduceSum(flags);
    overflow = flags[0][0].item<double>() > 0;
    discr_overflow = flags[0][1].item<double>() > 0;
  }
  // The step of both is skipped together, so each scaler sees its own overflow only.
  if (m_scaler) m_scaler->update(overflow);
  if (discr) m_discr_scaler->update(discr_overflow);
  return overflow || discr_overflow;
}

GradientNorms TrainingStep::clipGradients(bool gan) {
  const double max_norm = m_config.train.grad_clip;
  distributed::RankGroup* shares_of = m_gen.shards ? m_group : nullptr;
  GradientNorms norms;
  norms.tokenizer = clipNorm(m_gen.gradientHolders(), max_norm, shares_of);
  if (gan && m_discr) norms.discriminator = clipNorm(m_dis.gradientHolders(), max_norm, shares_of);
  return norms;
}

void TrainingStep::optimizerStep(double rate, double discr_rate, bool gan) {
  m_gen.step(rate, m_group);
  if (gan && m_discr) m_dis.step(discr_rate, m_group);
}

void TrainingStep::updateShardedEma(const core::TrainConfig& train, std::int64_t step) {
  updateEma(m_ema_shares, m_gen.flat_adamw->shares(), train, step);
}

TrainingStep::HeldBytes TrainingStep::heldBytes() const {
  StorageBytes parameters, gradients, state;
  for (const torch::nn::Module* model : {static_cast<const torch::nn::Module*>(m_tokenizer.get()),
                                         static_cast<const torch::nn::Module*>(m_discr.get())}) {
    if (model == nullptr) continue;
    for (const auto& p : model->parameters()) {
      parameters.add(p);
      gradients.add(p.grad());
    }
  }
  HeldBytes held;
  for (const Optimisation* o : {&m_gen, &m_dis}) {
    if (o->flat_adamw) {
      for (const auto& share : o->flat_adamw->shares()) {
        parameters.add(share);
        gradients.add(share.grad());
      }
      for (const auto& t : o->flat_adamw->stateTensors()) state.add(t);
    }
    if (o->adamw) held.optimizer_state += o->adamw->stateBytes();
  }
  held.parameters = parameters.bytes();
  held.gradients = gradients.bytes();
  held.optimizer_state += state.bytes();
  return held;
}

void updateEma(std::vector<std::pair<std::string, torch::Tensor>>& ema, const Tokenizer& tokenizer,
               const core::TrainConfig& train, std::int64_t step) {
  const auto params = tokenizer.named_parameters();
  std::vector<std::string> names;
  std::vector<torch::Tensor> averages, weights;
  if (ema.empty()) {
    for (const auto& p : params) {
      names.push_back(p.key());
      weights.push_back(p.value());
    }
  } else {
    for (const auto& [name, avg] : ema) {
      names.push_back(name);
      averages.push_back(avg);
      weights.push_back(params[name]);
    }
  }
  updateEma(averages, weights, train, step);
  ema.clear();
  for (std::size_t i = 0; i < averages.size(); ++i) ema.emplace_back(names[i], averages[i]);
}

void updateEma(std::vector<torch::Tensor>& averages, const std::vector<torch::Tensor>& weights,
               const core::TrainConfig& train, std::int64_t step) {
  if (!train.ema || step < train.ema_start_step) return;
  torch::NoGradGuard no_grad;
  if (averages.empty() || step == train.ema_start_step) {
    averages.clear();
    for (const auto& w : weights) averages.push_back(w.detach().clone());
    return;
  }
  if (step % train.ema_update_every != 0) return;
  for (std::size_t i = 0; i < averages.size(); ++i)
    averages[i].mul_(train.ema_beta).add_(weights[i].detach(), 1.0 - train.ema_beta);
}

}  // namespace tb::trainer
