// TrainingStep: the generator step's gradients and adaptive weight equal the plain formulation
// (VQGAN's two gradients at the last decoder layer, then backward of the whole loss).
#include "trainer/training/training_step.h"

#include "core/presets.h"

#include <gtest/gtest.h>

#include <vector>

namespace tb::trainer {
namespace {

core::RunConfig ganConfig() {
  core::RunConfig c;
  c.data.image_size = 32;
  c.data.num_frames = 5;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {{"residual", {}},
                    {"compress_space", {}},
                    {"residual", {}},
                    {"compress_time", {}},
                    {"residual", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 256;
  c.model.discriminator.max_dim = 32;
  c.loss.perceptual_weight = 0.3;
  c.loss.perceptual_net = core::LpipsNet::Alex;
  c.loss.adversarial_weight = 0.5;
  c.loss.adaptive_weight = true;
  c.train.threads = 1;
  return c;
}

std::vector<torch::Tensor> gradients(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& p : module.parameters())
    out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return out;
}

double valueOf(const StepValues& values, const std::string& name) {
  for (const auto& [n, v] : values) {
    if (n == name) return v.item<double>();
  }
  ADD_FAILURE() << "no value " << name;
  return 0;
}

TEST(TrainingStep, GeneratorStepEqualsThePlainLossBackward) {
  const core::RunConfig config = ganConfig();
  torch::manual_seed(3);
  TrainingStep step(config, TrainingStepSetup{nullptr, MissingPerceptualWeights::Random, {}});
  ASSERT_TRUE(step.discriminator());
  ASSERT_TRUE(step.lpips());
  Tokenizer& tokenizer = *step.tokenizer();
  const torch::Tensor x = torch::rand({2, 3, 5, 32, 32}) * 2 - 1;

  step.zeroGrad(true);
  torch::manual_seed(11);
  StepValues values;
  const GeneratorPass pass = step.generatorStep(x, GeneratorTerms{true, true}, 1, false, values);
  const std::vector<torch::Tensor> fast = gradients(tokenizer);
  for (const auto& g : gradients(*step.discriminator()))
    EXPECT_EQ(g.abs().max().item<double>(), 0.0);

  // The plain formulation, with the same random frame picks.
  step.zeroGrad(true);
  torch::manual_seed(11);
  const TokenizerOutput out = tokenizer.forward(x);
  const torch::Tensor pick = torch::randint(5, {2}, torch::kLong);
  const torch::Tensor perceptual =
      step.lpips()->forward(framesAt(out.recon, pick), framesAt(x, pick)).mean();
  const torch::Tensor nll = lossTerm(out, "recon_l1") + config.loss.perceptual_weight * perceptual;
  const torch::Tensor gan_pick = torch::randint(5, {2}, torch::kLong);
  for (auto& p : step.discriminator()->parameters()) p.requires_grad_(false);
  const torch::Tensor g_loss =
      gan::hingeGeneratorLoss(step.discriminator()->forward(framesAt(out.recon, gan_pick)));
  for (auto& p : step.discriminator()->parameters()) p.requires_grad_(true);
  const double weight = gan::adaptiveWeight(nll, g_loss, tokenizer.lastDecoderWeight(),
                                            config.loss.adaptive_weight_max);
  const torch::Tensor loss =
      nll + lossTerm(out, "quantizer") + config.loss.adversarial_weight * weight * g_loss;
  loss.backward();
  const std::vector<torch::Tensor> plain = gradients(tokenizer);

  EXPECT_NEAR(valueOf(values, "train/adaptive_weight"), weight, 1e-5 * weight);
  EXPECT_NEAR(pass.loss.item<double>(), loss.item<double>(), 1e-5 * std::abs(loss.item<double>()));
  ASSERT_EQ(fast.size(), plain.size());
  double largest = 0;
  for (std::size_t i = 0; i < fast.size(); ++i) {
    largest = std::max(largest, plain[i].abs().max().item<double>());
    EXPECT_TRUE(torch::allclose(fast[i], plain[i], 1e-4, 1e-6))
        << "parameter " << i << ": largest difference "
        << (fast[i] - plain[i]).abs().max().item<double>();
  }
  EXPECT_GT(largest, 0.0);
  EXPECT_GT(weight, 0.0);
}

TEST(TrainingStep, BenchSmallDiscriminatorHasTheReferenceSize) {
  // Issue 9: magvit2-pytorch's default frame discriminator for the benchmark tokenizer, 40.7M
  // parameters (dim = the tokenizer's last dim, attention after every block).
  const core::ConfigLoad load = core::loadPreset("bench-small");
  ASSERT_TRUE(load.ok());
  const auto d = makeDiscriminator(load.config.model, load.config.data);
  EXPECT_NEAR(static_cast<double>(countParameters(*d)), 40.7e6, 0.05e6);
}

TEST(ActivationCheckpointing, GradientsEqualThePlainRun) {
  core::RunConfig config = ganConfig();
  config.model.layers = {{"residual", {}},
                         {"compress_space", {}},
                         {"consecutive_residual", 2},
                         {"attend_space", {}},
                         {"linear_attend_space", {}},
                         {"compress_time", {}},
                         {"attend_time", {}},
                         {"residual", {}}};
  const torch::Tensor x = torch::rand({2, 3, 5, 32, 32}) * 2 - 1;
  auto run = [&](const std::vector<std::string>& checkpointed) {
    torch::manual_seed(5);
    auto tokenizer = makeTokenizer(config.model, config.data);
    tokenizer->setActivationCheckpointing(checkpointed);
    tokenizer->train();
    const TokenizerOutput out = tokenizer->forward(x);
    (lossTerm(out, "recon_l1") + lossTerm(out, "quantizer")).backward();
    return gradients(*tokenizer);
  };
  const std::vector<torch::Tensor> plain = run({});
  for (const std::vector<std::string>& types :
       {std::vector<std::string>{"all"}, std::vector<std::string>{"residual", "attend_time"},
        std::vector<std::string>{"consecutive_residual", "compress_space"}}) {
    const std::vector<torch::Tensor> checkpointed = run(types);
    ASSERT_EQ(checkpointed.size(), plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      EXPECT_TRUE(torch::allclose(checkpointed[i], plain[i], 1e-5, 1e-7))
          << types.front() << ": parameter " << i << " differs by "
          << (checkpointed[i] - plain[i]).abs().max().item<double>();
    }
  }
  EXPECT_GT(plain.front().abs().max().item<double>(), 0.0);
}

}  // namespace
}  // namespace tb::trainer
