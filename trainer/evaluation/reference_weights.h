#pragma once
// Loading a reference network's weight file (a torch.save of its state_dict, e.g.
// pt_inception-2015-12-05-6726825d.pth or i3d_pretrained_400.pt) into a module whose registered
// names are the reference's keys, through the project's pickle reader.

#include <torch/torch.h>

#include <string>

namespace tb::trainer::metrics {

/// Copies every parameter and buffer of `module` from the file at `path`, by name. Throws
/// std::runtime_error "<file>: <problem>": unreadable or not a torch.save archive, not a dict,
/// "missing <key>", "<key> is a <kind>, not a tensor", "<key> has shape [..], <network> needs
/// [..]" (the first mismatching key: another network's file says which). Keys the module does not
/// have are ignored. Nothing is changed on failure.
void loadReferenceWeights(torch::nn::Module& module, const std::string& path,
                          const std::string& network);

}  // namespace tb::trainer::metrics
