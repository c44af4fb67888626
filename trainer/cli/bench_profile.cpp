#include "trainer/cli/bench_profile.h"

#include "trainer/cpu_features.h"

#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace tb::trainer::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Self time (time inside an op minus the ops it called) per op, and per op and argument shapes.
// Ops on the intra-op pool's threads are inside their caller.
struct OpTime {
  double self_s = 0;
  double total_s = 0;
  long long calls = 0;
};
std::mutex g_mutex;
std::map<std::string, OpTime> g_by_name;
std::map<std::string, OpTime> g_by_shape;

struct Frame : at::ObserverContext {
  Clock::time_point start;
  double children_s = 0;
  std::string shapes;
};
thread_local std::vector<Frame*> t_stack;

// "[2, 32, 19, 66, 66] bf16, [32, 32, 3, 3, 3]": the tensor arguments, float ones without a type.
std::string describeInputs(const at::RecordFunction& fn) {
  std::ostringstream s;
  bool first = true;
  for (const c10::IValue& v : fn.inputs()) {
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const at::Tensor& t = v.toTensor();
    s << (first ? "" : ", ") << t.sizes();
    if (t.scalar_type() != at::kFloat) s << " " << c10::toString(t.scalar_type());
    if (t.dim() >= 4 && !t.is_contiguous() &&
        t.is_contiguous(t.dim() == 5 ? at::MemoryFormat::ChannelsLast3d
                                     : at::MemoryFormat::ChannelsLast))
      s << " channels-last";
    first = false;
  }
  return s.str();
}

std::unique_ptr<at::ObserverContext> opStart(const at::RecordFunction& fn) {
  auto frame = std::make_unique<Frame>();
  frame->shapes = describeInputs(fn);
  frame->start = Clock::now();
  t_stack.push_back(frame.get());
  return frame;
}

void opEnd(const at::RecordFunction& fn, at::ObserverContext* context) {
  auto* frame = static_cast<Frame*>(context);
  if (frame == nullptr) return;
  const double total = std::chrono::duration<double>(Clock::now() - frame->start).count();
  if (!t_stack.empty() && t_stack.back() == frame) t_stack.pop_back();
  if (!t_stack.empty()) t_stack.back()->children_s += total;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (OpTime* op :
       {&g_by_name[fn.name()], &g_by_shape[std::string(fn.name()) + " " + frame->shapes]}) {
    op->self_s += total - frame->children_s;
    op->total_s += total;
    ++op->calls;
  }
}

void printTable(const char* title, const std::map<std::string, OpTime>& times, std::size_t rows,
                int width) {
  std::vector<std::pair<std::string, OpTime>> ops(times.begin(), times.end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.second.self_s > b.second.self_s; });
  std::fprintf(stderr, "\n%-*s %9s %9s %6s\n", width, title, "self s", "total s", "calls");
  for (std::size_t i = 0; i < ops.size() && i < rows; ++i) {
    std::fprintf(stderr, "%-*s %9.3f %9.3f %6lld\n", width, ops[i].first.c_str(),
                 ops[i].second.self_s, ops[i].second.total_s, ops[i].second.calls);
  }
}

// The oneDNN primitives of one repetition, per kind, implementation and propagation.
void printOneDnn(const std::function<void()>& body) {
  std::vector<std::string> lines;
  {
    OneDnnVerbose verbose;
    body();
    lines = verbose.finish();
  }
  std::map<std::string, OpTime> kernels;
  double total_ms = 0;
  for (const std::string& line : lines) {
    OneDnnExec exec;
    if (!parseOneDnnExec(line, exec)) continue;
    OpTime& k = kernels[exec.kind + " " + exec.implementation + " " + exec.propagation];
    k.self_s += exec.ms / 1e3;
    k.total_s += exec.ms / 1e3;
    ++k.calls;
    total_ms += exec.ms;
  }
  if (kernels.empty()) {
    std::fprintf(stderr, "\noneDNN ran no primitive in this step (or its verbose mode is off)\n");
    return;
  }
  char title[96];
  std::snprintf(title, sizeof title, "oneDNN primitives (%.3f s in all)", total_ms / 1e3);
  printTable(title, kernels, 20, 62);
}

}  // namespace

void printProfile(const std::function<void()>& body) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_by_name.clear();
    g_by_shape.clear();
  }
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&opStart, &opEnd).needsInputs(true));
  const auto start = Clock::now();
  body();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  at::removeCallback(handle);
  std::fprintf(stderr, "profile of one repetition: %.3f s wall; CPU %s\n", wall,
               cpuFeatures().summary().c_str());
  printTable("op", g_by_name, 30, 48);
  printTable("op and its tensor arguments", g_by_shape, 30, 100);
  printOneDnn(body);
}

}  // namespace tb::trainer::cli
