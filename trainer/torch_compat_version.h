#pragma once
// The LibTorch version being compiled against, for the compatibility seam (torch_compat.h) and
// the few headers that must differ by version without including all of torch.

#include <torch/version.h>

// TB_TORCH_AT_LEAST(2, 4): the LibTorch being compiled against is 2.4 or newer.
#define TB_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||     \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator::allocate is const before 2.3; 2.3 made it non-const (and added copy_data).
#if TB_TORCH_AT_LEAST(2, 3)
#define TB_ALLOCATE_CONST
#else
#define TB_ALLOCATE_CONST const
#endif
