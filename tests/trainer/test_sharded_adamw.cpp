// ShardedAdamW, Tokenbench's own AdamW (name-keyed state, shardable), against LibTorch's
// torch::optim::AdamW: the same parameters, gradients and rates for 20 steps give the same
// parameters. Weight decay applies to weights with two or more dimensions only, which in
// torch::optim::AdamW is two parameter groups (decay, and no decay for biases and norms).
#include "trainer/training/sharded_adamw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tb::trainer {
namespace {

struct Params {
  std::vector<torch::Tensor> decayed;    // >= 2-D
  std::vector<torch::Tensor> undecayed;  // 1-D
};

Params makeParams() {
  torch::manual_seed(7);
  Params p;
  p.decayed = {torch::randn({8, 5}).requires_grad_(), torch::randn({3, 4, 2}).requires_grad_()};
  p.undecayed = {torch::randn({8}).requires_grad_(), torch::randn({4}).requires_grad_()};
  return p;
}

// A gradient per step and parameter that both optimisers see: a fixed function of the
// parameter (a quadratic pull towards a seeded target) plus seeded noise.
void setGradients(std::vector<torch::Tensor> params, int step) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < params.size(); ++i) {
    torch::manual_seed(1000 * step + static_cast<std::uint64_t>(i));
    const torch::Tensor target = torch::randn(params[i].sizes());
    const torch::Tensor noise = 0.1 * torch::randn(params[i].sizes());
    params[i].mutable_grad() = (params[i] - target) * 0.5 + noise;
  }
}

double runBoth(double weight_decay) {
  Params ours = makeParams();
  Params theirs = makeParams();
  NamedTensors named = {{"a.weight", ours.decayed[0]},
                        {"b.weight", ours.decayed[1]},
                        {"a.bias", ours.undecayed[0]},
                        {"norm.gamma", ours.undecayed[1]}};
  ShardedAdamW sharded(named, ShardedAdamW::Options{0.9, 0.99, 1e-8, weight_decay});

  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(theirs.decayed, std::make_unique<torch::optim::AdamWOptions>(
                                          torch::optim::AdamWOptions(1e-3)
                                              .betas({0.9, 0.99})
                                              .eps(1e-8)
                                              .weight_decay(weight_decay)));
  groups.emplace_back(
      theirs.undecayed,
      std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(1e-3).betas({0.9, 0.99}).eps(1e-8).weight_decay(0)));
  torch::optim::AdamW reference(groups, torch::optim::AdamWOptions(1e-3));

  const auto all = [](const Params& p) {
    std::vector<torch::Tensor> v = p.decayed;
    v.insert(v.end(), p.undecayed.begin(), p.undecayed.end());
    return v;
  };
  for (int step = 1; step <= 20; ++step) {
    // A warmup-like rate that changes every step, as the schedule does in training.
    const double lr = 1e-3 * std::min(1.0, step / 5.0);
    for (auto& group : reference.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    setGradients(all(ours), step);
    setGradients(all(theirs), step);
    sharded.step(lr);
    reference.step();
  }
  double worst = 0, moved = 0;
  const Params start = makeParams();
  for (std::size_t i = 0; i < all(ours).size(); ++i) {
    worst = std::max(worst, (all(ours)[i] - all(theirs)[i]).abs().max().item<double>());
    moved = std::max(moved, (all(ours)[i] - all(start)[i]).abs().max().item<double>());
  }
  EXPECT_GT(moved, 1e-3) << "the parameters did not move: the comparison would be vacuous";
  return worst;
}

TEST(ShardedAdamW, TwentyStepsEqualTorchAdamWWithoutWeightDecay) { EXPECT_LT(runBoth(0.0), 1e-6); }

TEST(ShardedAdamW, TwentyStepsEqualTorchAdamWWithDecayOnWeightsOnly) {
  EXPECT_LT(runBoth(0.05), 1e-6);
}

TEST(ShardedAdamW, DecayOnEveryParameterWouldDiffer) {
  // The exclusion is real: decaying the 1-D parameters too moves them measurably.
  Params a = makeParams();
  Params b = makeParams();
  ShardedAdamW excluded({{"bias", a.undecayed[0]}}, ShardedAdamW::Options{0.9, 0.99, 1e-8, 0.5});
  torch::optim::AdamW all_decayed(std::vector<torch::Tensor>{b.undecayed[0]},
                                  torch::optim::AdamWOptions(1e-2).weight_decay(0.5));
  for (int step = 1; step <= 20; ++step) {
    setGradients({a.undecayed[0]}, step);
    setGradients({b.undecayed[0]}, step);
    excluded.step(1e-2);
    all_decayed.step();
  }
  EXPECT_GT((a.undecayed[0] - b.undecayed[0]).abs().max().item<double>(), 1e-4);
}

}  // namespace
}  // namespace tb::trainer
