#pragma once
// `bench --profile`: where one repetition of a benchmarked step spends its time, printed on
// stderr: self time per op, the same per op and argument shapes (which convolution, which copy),
// and the oneDNN primitives it ran (kind, implementation, propagation: which kernels, and whether
// they are the machine's AMX or AVX-512 ones), from oneDNN's verbose mode in a second repetition.

#include <functional>

namespace tb::trainer::cli {

/// Runs `body` twice: once timed per op, once under oneDNN's verbose mode.
void printProfile(const std::function<void()>& body);

}  // namespace tb::trainer::cli
