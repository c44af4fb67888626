#pragma once
// The one precompiled header shared by every torch translation unit (see trainer/CMakeLists.txt).
#include <torch/torch.h>
