#include "trainer/torch_compat.h"

namespace tb::trainer::compat {

std::string torchVersion() { return TORCH_VERSION; }

bool cudaAvailable() {
#if TB_WITH_CUDA
  return torch::cuda::is_available();
#else
  return false;
#endif
}

}  // namespace tb::trainer::compat
