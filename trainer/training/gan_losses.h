#pragma once
// The adversarial terms of tokenizer training: hinge losses, VQGAN's adaptive weight, the R1
// gradient penalty and LeCAM regularisation. Logits may be `[B]` or patch maps `[B, 1, h, w]`.

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace tb::trainer::gan {

/// Discriminator hinge loss: mean(relu(1 - real)) + mean(relu(1 + fake)).
inline torch::Tensor hingeDiscriminatorLoss(const torch::Tensor& real_logits,
                                            const torch::Tensor& fake_logits) {
  return torch::relu(1.0 - real_logits).mean() + torch::relu(1.0 + fake_logits).mean();
}

/// Generator hinge loss: -mean(fake).
inline torch::Tensor hingeGeneratorLoss(const torch::Tensor& fake_logits) {
  return -fake_logits.mean();
}

/// VQGAN's adaptive weight: |d nll / d w| / (|d gan / d w| + 1e-4) at the last decoder layer
/// weight `w`, clamped to [0, max_weight], without gradient. Keeps both graphs for backward.
/// In data-parallel training `average` turns both gradients into their means over the ranks
/// first, so every rank uses the weight of the global batch.
inline double adaptiveWeight(
    const torch::Tensor& nll_loss, const torch::Tensor& gan_loss, const torch::Tensor& w,
    double max_weight, const std::function<void(std::vector<torch::Tensor>&)>& average = nullptr) {
  std::vector<torch::Tensor> grads = {
      torch::autograd::grad({nll_loss}, {w}, {}, /*retain_graph=*/true)[0],
      torch::autograd::grad({gan_loss}, {w}, {}, /*retain_graph=*/true)[0]};
  if (average) average(grads);
  const auto& nll_grad = grads[0];
  const auto& gan_grad = grads[1];
  const double ratio = nll_grad.norm().item<double>() / (gan_grad.norm().item<double>() + 1e-4);
  return std::clamp(ratio, 0.0, max_weight);
}

/// The same adaptive weight from the gradients `nll_grad` and `gan_grad` of the two losses at
/// `output`, a tensor computed from `w` (the reconstruction): both gradients at `w` come from
/// backward passes over the layers between `w` and `output` only. Keeps the graph. A 0-dim
/// float tensor on w's device (no host synchronisation).
inline torch::Tensor adaptiveWeightAtOutput(
    const torch::Tensor& output, const torch::Tensor& nll_grad, const torch::Tensor& gan_grad,
    const torch::Tensor& w, double max_weight,
    const std::function<void(std::vector<torch::Tensor>&)>& average = nullptr) {
  std::vector<torch::Tensor> grads = {
      torch::autograd::grad({output}, {w}, {nll_grad}, /*retain_graph=*/true)[0],
      torch::autograd::grad({output}, {w}, {gan_grad}, /*retain_graph=*/true)[0]};
  if (average) average(grads);
  const torch::Tensor ratio =
      grads[0].norm().to(torch::kFloat) / (grads[1].norm().to(torch::kFloat) + 1e-4);
  return ratio.clamp(0.0, max_weight).detach();
}

/// R1 penalty (Mescheder et al. 2018): mean over the batch of |d sum(real_logits) / d real|^2,
/// halved. `real` must have required grad when `real_logits` was computed.
inline torch::Tensor r1Penalty(const torch::Tensor& real_logits, const torch::Tensor& real) {
  const auto grad = torch::autograd::grad({real_logits.sum()}, {real}, {}, /*retain_graph=*/true,
                                          /*create_graph=*/true)[0];
  return 0.5 * grad.pow(2).reshape({grad.size(0), -1}).sum(1).mean();
}

/// LeCAM regularisation (Tseng et al. 2021): logits are pulled towards exponential moving
/// averages of the other side's mean logit. The anchors are plain numbers kept in checkpoints.
struct LecamAnchors {
  double real = 0;
  double fake = 0;
  bool initialised = false;

  /// Moves the anchors towards the batch's mean logits `r` (real) and `f` (fake).
  void update(double r, double f, double decay) {
    if (!initialised) {
      real = r;
      fake = f;
      initialised = true;
      return;
    }
    real = decay * real + (1 - decay) * r;
    fake = decay * fake + (1 - decay) * f;
  }

  /// mean(relu(real_logits - fake anchor)^2) + mean(relu(real anchor - fake_logits)^2).
  torch::Tensor penalty(const torch::Tensor& real_logits, const torch::Tensor& fake_logits) const {
    return torch::relu(real_logits - fake).pow(2).mean() +
           torch::relu(real - fake_logits).pow(2).mean();
  }
};

}  // namespace tb::trainer::gan
