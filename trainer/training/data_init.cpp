#include "trainer/training/data_init.h"

namespace tb::trainer {

std::int64_t initialiseQuantizerInput(Tokenizer& tokenizer, const torch::Tensor& clips) {
  torch::NoGradGuard no_grad;
  auto params = tokenizer.named_parameters(true);
  torch::Tensor* weight = params.find("quantizer.project_in.weight");
  torch::Tensor* bias = params.find("quantizer.project_in.bias");
  if (weight == nullptr || bias == nullptr) return 0;
  const torch::Tensor latent = tokenizer.encode(clips);
  const torch::Tensor tokens = latent.movedim(1, -1).reshape({-1, latent.size(1)});
  const torch::Tensor y = torch::addmm(*bias, tokens, weight->t());  // [N, code dims]
  const torch::Tensor mean = y.mean(0);
  const torch::Tensor scale = 1.0 / y.std(0).clamp_min(1e-6);
  weight->mul_(scale.unsqueeze(1));
  bias->sub_(mean).mul_(scale);
  return tokens.size(0);
}

}  // namespace tb::trainer
