#include "trainer/models/activation_checkpoint.h"

#include "trainer/torch_compat.h"

#include <cstdint>
#include <vector>

namespace tb::trainer {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Inputs: the layer (a pointer, not a variable), x, cond (optional), the layer's parameters.
// Backward returns one gradient per input slot: none for the layer, then x, cond, parameters.
class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, std::intptr_t layer, const torch::Tensor& x,
                               const c10::optional<torch::Tensor>& cond, torch::TensorList params) {
    ctx->saved_data["layer"] = static_cast<std::int64_t>(layer);
    ctx->saved_data["params"] = static_cast<std::int64_t>(params.size());
    const compat::AutocastState autocast = compat::autocastState();
    ctx->saved_data["autocast_cpu"] = autocast.cpu;
    ctx->saved_data["autocast_cuda"] = autocast.cuda;
    ctx->saved_data["autocast_cpu_dtype"] = static_cast<std::int64_t>(autocast.cpu_dtype);
    ctx->saved_data["autocast_cuda_dtype"] = static_cast<std::int64_t>(autocast.cuda_dtype);
    const torch::Tensor c = cond.has_value() ? *cond : torch::Tensor();
    ctx->saved_data["has_cond"] = c.defined();
    ctx->save_for_backward({x, c.defined() ? c : torch::Tensor()});
    return reinterpret_cast<MagvitLayer*>(layer)->forward(x, c);  // grad mode is off here
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto* layer = reinterpret_cast<MagvitLayer*>(
        static_cast<std::intptr_t>(ctx->saved_data["layer"].toInt()));
    const std::size_t n_params = static_cast<std::size_t>(ctx->saved_data["params"].toInt());
    const bool has_cond = ctx->saved_data["has_cond"].toBool();
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor x = saved[0].detach().requires_grad_(saved[0].requires_grad());
    const torch::Tensor cond =
        has_cond ? saved[1].detach().requires_grad_(saved[1].requires_grad()) : torch::Tensor();

    torch::Tensor y;
    {
      torch::AutoGradMode grad(true);
      // Recompute under the autocast state of the forward (bf16/fp16 training).
      compat::AutocastState forward_state;
      forward_state.cpu = ctx->saved_data["autocast_cpu"].toBool();
      forward_state.cuda = ctx->saved_data["autocast_cuda"].toBool();
      forward_state.cpu_dtype =
          static_cast<at::ScalarType>(ctx->saved_data["autocast_cpu_dtype"].toInt());
      forward_state.cuda_dtype =
          static_cast<at::ScalarType>(ctx->saved_data["autocast_cuda_dtype"].toInt());
      const compat::AutocastState previous = compat::autocastState();
      compat::setAutocastState(forward_state);
      try {
        y = layer->forward(x, cond);
      } catch (...) {
        compat::setAutocastState(previous);
        throw;
      }
      compat::setAutocastState(previous);
    }
    // Gradients of x, cond and the parameters from one backward through the recomputed layer.
    std::vector<torch::Tensor> inputs;
    std::vector<std::size_t> slots;  // index into the returned list
    if (x.requires_grad()) {
      inputs.push_back(x);
      slots.push_back(1);
    }
    if (cond.defined() && cond.requires_grad()) {
      inputs.push_back(cond);
      slots.push_back(2);
    }
    const auto params = layer->parameters();
    for (std::size_t i = 0; i < params.size() && i < n_params; ++i) {
      if (!params[i].requires_grad()) continue;
      inputs.push_back(params[i]);
      slots.push_back(3 + i);
    }
    variable_list out(3 + n_params);
    if (inputs.empty() || !y.requires_grad()) return out;
    const variable_list grads =
        torch::autograd::grad({y}, inputs, {grad_outputs[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    for (std::size_t k = 0; k < grads.size(); ++k) out[slots[k]] = grads[k];
    return out;
  }
};

}  // namespace

torch::Tensor checkpointedForward(MagvitLayer& layer, const torch::Tensor& x,
                                  const torch::Tensor& cond) {
  const std::vector<torch::Tensor> params = layer.parameters();
  bool needs_grad = x.requires_grad() || (cond.defined() && cond.requires_grad());
  for (const auto& p : params) needs_grad = needs_grad || p.requires_grad();
  if (!torch::GradMode::is_enabled() || !needs_grad) return layer.forward(x, cond);
  const c10::optional<torch::Tensor> c =
      cond.defined() ? c10::optional<torch::Tensor>(cond) : c10::nullopt;
  return CheckpointFunction::apply(reinterpret_cast<std::intptr_t>(&layer), x, c,
                                   torch::TensorList(params));
}

}  // namespace tb::trainer
