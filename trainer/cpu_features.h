#pragma once
// The CPU's vector and matrix units, as the processor reports them (cpuid) and as oneDNN, which
// runs LibTorch's CPU convolutions, dispatches to them; and oneDNN's verbose lines, caught for
// `bench --profile` (which kernels a step runs).
// Reported by `--version`, the `hello` event and `bench`; train.precision "auto" follows them.

#include <string>
#include <vector>

namespace tb::trainer {

struct CpuFeatures {
  bool avx2 = false;
  bool avx512 = false;       ///< AVX-512 F
  bool avx512_bf16 = false;  ///< AVX512-BF16: bf16 dot products in the vector units
  bool amx_bf16 = false;     ///< AMX-BF16: bf16 tile matrix products
  /// oneDNN's own line for the instruction set it dispatches to, e.g. "Intel AVX-512 with float16,
  /// Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 and 8-bit integer support";
  /// empty when LibTorch ran no oneDNN primitive for the probe.
  std::string onednn_isa;

  /// bf16 computed by the hardware rather than emulated in fp32 (AMX-BF16 or AVX512-BF16).
  bool nativeBf16() const { return amx_bf16 || avx512_bf16; }
  /// "AVX2 AVX-512 AVX512-BF16 AMX-BF16" (those present; "no AVX2" when none is).
  std::string units() const;
  /// units(), then oneDNN's view: "AVX2 AVX-512 AVX512-BF16 AMX-BF16 (oneDNN: Intel AVX-512 ...)".
  std::string summary() const;
};

/// This machine's features, probed once (a small convolution under oneDNN's verbose mode, with
/// the process's standard output caught for the moment it runs: call it before other threads
/// write there; queryRuntime() does, at start).
const CpuFeatures& cpuFeatures();

/// oneDNN's verbose mode for the life of the object, its lines caught instead of printed (oneDNN
/// writes them on standard output, which the trainer's events may use). Nothing else may write
/// to standard output meanwhile: what does is caught too, and dropped.
class OneDnnVerbose {
 public:
  OneDnnVerbose();
  ~OneDnnVerbose();
  OneDnnVerbose(const OneDnnVerbose&) = delete;
  OneDnnVerbose& operator=(const OneDnnVerbose&) = delete;

  /// Ends the mode (once) and returns its lines that oneDNN wrote ("onednn_verbose,..." or
  /// "dnnl_verbose,...").
  std::vector<std::string> finish();

 private:
  int m_saved_stdout = -1;
  int m_capture = -1;
  bool m_finished = false;
};

/// One executed oneDNN primitive of a verbose line: kind ("convolution", "reorder", ...), its
/// implementation ("brgconv:avx512_core_amx", "jit:avx512_core", ...), propagation
/// ("forward_training", "backward_weights", ...) and milliseconds. False for other lines.
struct OneDnnExec {
  std::string kind, implementation, propagation;
  double ms = 0;
};
bool parseOneDnnExec(const std::string& line, OneDnnExec& out);

}  // namespace tb::trainer
