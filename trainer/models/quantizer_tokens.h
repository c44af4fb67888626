#pragma once
// The token layout the quantizers' sources share (not part of the quantizer interface):
// channel-first latents to token rows and back, and option checks that name the field.

#include <torch/torch.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer::quantizer_tokens {

// [B, D, *S] -> [B, N, D]; `spatial` receives S.
inline torch::Tensor toTokens(const torch::Tensor& latent, std::vector<std::int64_t>& spatial) {
  TORCH_CHECK(latent.dim() >= 2, "quantizer input must be [B, D, ...], got ", latent.sizes());
  spatial.assign(latent.sizes().begin() + 2, latent.sizes().end());
  return latent.flatten(2).transpose(1, 2);
}

// [B, N, D] -> [B, D, *S]
inline torch::Tensor fromTokens(const torch::Tensor& tokens,
                                const std::vector<std::int64_t>& spatial) {
  std::vector<std::int64_t> shape{tokens.size(0), tokens.size(2)};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  // Contiguous: the view is channels-last, which the decoder's first convolution copied forward
  // and again backward (and ran its channels-last kernels on).
  return tokens.transpose(1, 2).reshape(shape).contiguous();
}

// [B, N] or [B, N, C] -> [B, *S] or [B, *S, C]
inline torch::Tensor indicesFromTokens(const torch::Tensor& idx, std::int64_t batch,
                                       const std::vector<std::int64_t>& spatial,
                                       std::int64_t codebooks) {
  std::vector<std::int64_t> shape{batch};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  if (codebooks > 1) shape.push_back(codebooks);
  return idx.reshape(shape);
}

inline void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument(field + ": " + message);
}

}  // namespace tb::trainer::quantizer_tokens
