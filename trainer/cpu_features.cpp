#include "trainer/cpu_features.h"

#include <torch/torch.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

// LibTorch's switch for oneDNN's verbose mode (torch.backends.mkldnn.verbose in Python); its
// header is Python's, the function is in libtorch_cpu (1.13 and 2.x).
namespace torch::verbose {
int _mkldnn_set_verbose(int level);
}

namespace tb::trainer {
namespace {

std::vector<std::string> splitFields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  return fields;
}

bool isVerboseLine(const std::string& line) {
  return line.rfind("onednn_verbose,", 0) == 0 || line.rfind("dnnl_verbose,", 0) == 0;
}

CpuFeatures probe() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512 = __builtin_cpu_supports("avx512f");
  f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  f.amx_bf16 = __builtin_cpu_supports("amx-bf16");
#endif
  // oneDNN prints its instruction set with its first verbose line: one small convolution it runs
  // (a batch of two takes LibTorch's oneDNN path).
  OneDnnVerbose verbose;
  try {
    torch::NoGradGuard no_grad;
    (void)torch::conv2d(torch::ones({2, 8, 8, 8}), torch::ones({8, 8, 3, 3}));
  } catch (const std::exception&) {
    // No oneDNN view: the units from cpuid stand.
  }
  for (const std::string& line : verbose.finish()) {
    const auto isa = line.find(",isa:");
    if (isa != std::string::npos) f.onednn_isa = line.substr(isa + 5);
  }
  return f;
}

}  // namespace

std::string CpuFeatures::units() const {
  std::string s;
  auto add = [&s](bool has, const char* name) {
    if (has) s += (s.empty() ? "" : " ") + std::string(name);
  };
  add(avx2, "AVX2");
  add(avx512, "AVX-512");
  add(avx512_bf16, "AVX512-BF16");
  add(amx_bf16, "AMX-BF16");
  return s.empty() ? "no AVX2" : s;
}

std::string CpuFeatures::summary() const {
  return units() + (onednn_isa.empty() ? "" : " (oneDNN: " + onednn_isa + ")");
}

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures features = probe();
  return features;
}

OneDnnVerbose::OneDnnVerbose() {
  std::cout.flush();
  std::fflush(stdout);
  m_capture = ::memfd_create("tokenbench-onednn-verbose", 0);
  m_saved_stdout = m_capture >= 0 ? ::dup(STDOUT_FILENO) : -1;
  if (m_saved_stdout < 0 || ::dup2(m_capture, STDOUT_FILENO) < 0) {
    if (m_saved_stdout >= 0) ::close(m_saved_stdout);
    if (m_capture >= 0) ::close(m_capture);
    m_saved_stdout = m_capture = -1;
    m_finished = true;  // nothing caught: verbose stays off rather than mixing into stdout
    return;
  }
  torch::verbose::_mkldnn_set_verbose(1);
}

OneDnnVerbose::~OneDnnVerbose() { (void)finish(); }

std::vector<std::string> OneDnnVerbose::finish() {
  std::vector<std::string> lines;
  if (m_finished) return lines;
  m_finished = true;
  torch::verbose::_mkldnn_set_verbose(0);
  std::cout.flush();
  std::fflush(stdout);
  ::dup2(m_saved_stdout, STDOUT_FILENO);
  ::close(m_saved_stdout);
  std::string text;
  if (::lseek(m_capture, 0, SEEK_SET) == 0) {
    char buffer[65536];
    for (ssize_t n; (n = ::read(m_capture, buffer, sizeof buffer)) > 0;)
      text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(m_capture);
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (isVerboseLine(line)) lines.push_back(line);
  return lines;
}

// oneDNN 2.x: "onednn_verbose,exec,cpu,convolution,jit:avx512_core,forward_training,...,0.52";
// 3.x adds fields before "exec" ("onednn_verbose,v1,primitive,exec,cpu,...").
bool parseOneDnnExec(const std::string& line, OneDnnExec& out) {
  if (!isVerboseLine(line)) return false;
  const std::vector<std::string> f = splitFields(line);
  for (std::size_t i = 1; i + 4 < f.size(); ++i) {
    if (f[i] != "exec" || (f[i + 1] != "cpu" && f[i + 1] != "gpu")) continue;
    char* end = nullptr;
    const double ms = std::strtod(f.back().c_str(), &end);
    if (end == f.back().c_str()) return false;
    out = OneDnnExec{f[i + 2], f[i + 3], f[i + 4], ms};
    return true;
  }
  return false;
}

}  // namespace tb::trainer
