#pragma once
// Tensor names of Tokenbench's MAGVIT-v2 tokenizer and frame discriminator against those of
// lucidrains' magvit2-pytorch (VideoTokenizer.state_dict() at a00519f, vector-quantize-pytorch's
// LFQ/FSQ): which tensor is which, and the shape it has there.
//
// The two module trees hold the same tensors under other names: the reference wraps layers in
// Residual / TokenShift / Sequential containers (".fn.", ".0.") and puts the encoder's last
// LayerNorm into encoder_layers[n]; Tokenbench names modules after what they are. Tensor contents
// and layouts are equal, except the reference discriminator's feed-forward, which is 2-D
// (Conv2d weights [o, i, 1, 1], RMSNorm gain [d, 1, 1]) where Tokenbench's is 3-D.

#include "trainer/models/discriminator.h"
#include "trainer/models/magvit_tokenizer.h"
#include "trainer/weights/state_dict_io.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tb::trainer::weights {

/// One Tokenbench tensor and its counterpart in magvit2-pytorch.
struct ReferenceTensor {
  std::string tokenbench;  ///< Tokenbench state-dict name ("encoder_layers.0.conv.conv.weight")
  std::string reference;   ///< magvit2-pytorch's ("encoder_layers.0.fn.0.conv.weight")
  std::vector<std::int64_t> tokenbench_shape;
  std::vector<std::int64_t> reference_shape;
};

/// Every parameter and buffer of `tokenizer`, in state-dict order, with its reference name.
/// Throws WeightsError naming a tensor that has no counterpart (a layer type the reference
/// names differently is a bug here, not a user error).
std::vector<ReferenceTensor> referenceTokenizerTensors(const MagvitTokenizerImpl& tokenizer);

/// Every tensor of a frame discriminator with its reference name
/// ("discr.blocks.0.0.conv_res.weight"). Throws WeightsError for other discriminator types and for
/// a block without attention (the reference puts linear attention after every block).
std::vector<ReferenceTensor> referenceDiscriminatorTensors(const FrameDiscriminatorImpl& discr);

/// Tensors the reference's state dict holds that Tokenbench derives instead: LFQ's bit weights
/// `quantizers.mask` (int64 [K], 2^(K-1) .. 1). Empty for FSQ.
NamedTensors referenceConstants(const MagvitTokenizerImpl& tokenizer);

}  // namespace tb::trainer::weights
