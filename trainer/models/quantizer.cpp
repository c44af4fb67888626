// The quantizer interface's shared part and the factory that builds one from the configuration.
#include "trainer/models/quantizer.h"

#include "trainer/models/finite_scalar_quantizer.h"
#include "trainer/models/lookup_free_quantizer.h"
#include "trainer/models/vector_quantizer.h"

#include <cmath>
#include <stdexcept>

namespace tb::trainer {

double Quantizer::bitsPerToken() const {
  return static_cast<double>(numCodebooks()) * std::log2(static_cast<double>(codebookSize()));
}

std::shared_ptr<Quantizer> makeQuantizer(const core::QuantizerConfig& c, std::int64_t dim) {
  auto prefix = [](const std::invalid_argument& e) {
    return std::invalid_argument(std::string("model.quantizer.") + e.what());
  };
  try {
    switch (c.type) {
      case core::QuantizerType::Lfq:
        return LookupFreeQuantizer(LookupFreeQuantizerOptions(dim, c.codebook_size)
                                       .num_codebooks(c.num_codebooks)
                                       .entropy_loss_weight(c.entropy_loss_weight)
                                       .commitment_loss_weight(c.commitment_loss_weight)
                                       .diversity_gamma(c.diversity_gamma)
                                       .soft_clamp(c.soft_clamp)
                                       .spherical(c.spherical)
                                       .entropy_estimate(c.entropy_estimate))
            .ptr();
      case core::QuantizerType::Fsq: {
        std::vector<std::int64_t> levels(c.fsq_levels.begin(), c.fsq_levels.end());
        return FiniteScalarQuantizer(FiniteScalarQuantizerOptions(dim, levels)
                                         .num_codebooks(c.num_codebooks)
                                         .commitment_loss_weight(c.commitment_loss_weight)
                                         .entropy_loss_weight(c.entropy_loss_weight))
            .ptr();
      }
      case core::QuantizerType::Vq:
        return VectorQuantizer(VectorQuantizerOptions(dim, c.codebook_size, c.codebook_dim)
                                   .beta(c.vq_beta)
                                   .l2_normalize(c.vq_l2_normalize)
                                   .ema(c.vq_ema)
                                   .ema_decay(c.vq_ema_decay)
                                   .dead_code_threshold(c.vq_dead_code_threshold))
            .ptr();
    }
  } catch (const std::invalid_argument& e) {
    throw prefix(e);
  }
  throw std::invalid_argument("model.quantizer.type: no quantizer for this value");
}

}  // namespace tb::trainer
