// The tokenizer interface's shared passes (tokenize, decode from indices, the full forward) and
// the factory (tokenizer.h).
#include "trainer/models/tokenizer.h"

#include "trainer/models/causal_conv.h"
#include "trainer/models/magvit_tokenizer.h"
#include "trainer/models/time_stream.h"
#include "trainer/models/vqgan_tokenizer.h"
#include "trainer/torch_compat.h"

#include <stdexcept>

namespace tb::trainer {
namespace F = torch::nn::functional;

QuantizerOutput Tokenizer::quantize(const torch::Tensor& latent) {
  compat::AutocastOff fp32;
  return quantizer()->quantize(compat::inFp32(latent));
}

torch::Tensor Tokenizer::tokenize(const torch::Tensor& video, const torch::Tensor& cond) {
  torch::NoGradGuard no_grad;
  auto q = quantizer();
  const bool was_training = q->is_training();
  q->eval();  // no EMA / restart side effects while tokenizing
  auto indices = quantize(encode(video, cond)).indices;
  q->train(was_training);
  return indices;
}

torch::Tensor Tokenizer::decodeFromIndices(const torch::Tensor& indices,
                                           const torch::Tensor& cond) {
  return decode(quantizer()->indicesToCodes(indices), cond);
}

TokenizerOutput Tokenizer::forward(const torch::Tensor& video, const torch::Tensor& cond) {
  const auto latent = encode(video, cond);
  auto q = quantize(latent);
  // The reconstruction and its losses in fp32 under autocast too.
  auto recon = compat::inFp32(decode(q.quantized, cond));
  if (video.dim() == 4) recon = recon.squeeze(2);
  compat::AutocastOff fp32;
  TokenizerOutput out;
  out.recon = recon;
  out.indices = q.indices;
  out.losses = {{"recon_l1", F::l1_loss(recon, video)},
                {"recon_mse", F::mse_loss(recon, video)},
                {"quantizer", q.loss}};
  for (auto& [name, value] : q.terms) out.losses.emplace_back("quantizer/" + name, value);
  return out;
}

torch::Tensor Tokenizer::tokenizeVideo(const torch::Tensor& video, std::int64_t chunk) {
  const std::int64_t step = timeFactor(), frames = video.size(2);
  std::int64_t length = 1 + (chunk - 1) * step;  // the first chunk starts the video
  if (chunk <= 0 || !codesTimeInChunks() || frames <= length) return tokenize(video);
  torch::NoGradGuard no_grad;
  TimeStreamScope stream;
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < frames; start += length, length = chunk * step)
    parts.push_back(tokenize(video.narrow(2, start, std::min(length, frames - start))));
  return torch::cat(parts, 1);
}

torch::Tensor Tokenizer::decodeVideo(const torch::Tensor& indices, std::int64_t chunk) {
  const std::int64_t t = indices.size(1);
  if (chunk <= 0 || !codesTimeInChunks() || t <= chunk) return decodeFromIndices(indices);
  torch::NoGradGuard no_grad;
  TimeStreamScope stream;
  std::vector<torch::Tensor> parts;
  for (std::int64_t start = 0; start < t; start += chunk)
    parts.push_back(decodeFromIndices(indices.narrow(1, start, std::min(chunk, t - start))));
  return torch::cat(parts, 2);
}

std::int64_t countParameters(const torch::nn::Module& module) {
  std::int64_t n = 0;
  for (const auto& p : module.parameters(true)) n += p.numel();
  return n;
}

std::shared_ptr<Tokenizer> makeTokenizer(const core::ModelConfig& model,
                                         const core::DataConfig& data) {
  requireOption(data.image_size >= 1, "data.image_size", "must be >= 1");
  switch (model.kind) {
    case core::ModelKind::Magvit2:
      return MagvitTokenizer(model, data.image_size).ptr();
    case core::ModelKind::Vqgan:
      return VqganTokenizer(model, data.image_size).ptr();
  }
  throw std::invalid_argument("model.kind: no tokenizer for this value");
}

}  // namespace tb::trainer
