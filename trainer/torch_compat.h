#pragma once
// Every LibTorch call whose API differs between 1.13 (Debian) and 2.x (GPU machines' wheels)
// goes through here, so both compile.

#include <torch/torch.h>
#include <torch/version.h>

#include <string>

namespace tb::trainer::compat {

/// "1.13.1"
std::string torchVersion();

/// Whether this LibTorch has CUDA and a device is visible.
bool cudaAvailable();

}  // namespace tb::trainer::compat
