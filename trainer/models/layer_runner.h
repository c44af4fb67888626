#pragma once
// How a model runs its top-level layers. By default a layer's forward is simply called; sharded
// training (distributed.strategy "zero3") installs a runner that gathers the layer's parameters
// from the ranks before it runs and frees them after (trainer/distributed/parameter_shards.h).

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace tb::trainer {

/// A top-level layer of a model: a unit of its own under zero3 when its type is chosen
/// (distributed.zero3_units).
struct ModelLayer {
  std::string name;  ///< the layer's name, its parameters' prefix ("encoder_layers.3")
  std::string type;  ///< MAGVIT-v2 layer type ("residual"), "discr_block" or "discr_attention"
  std::vector<const torch::nn::Module*>
      modules;  ///< whose parameters it holds (owned by the model)
};

/// Runs `forward`, the forward of the layer called `name` (a ModelLayer's name), and returns its
/// result.
using LayerRunner = std::function<torch::Tensor(const std::string& name,
                                                const std::function<torch::Tensor()>& forward)>;

}  // namespace tb::trainer
