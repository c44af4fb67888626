#pragma once
// The device a trainer process computes on (train.device) and the c10d backend that goes with
// it (distributed.backend).

#include "core/run_config.h"
#include "trainer/distributed/launch_environment.h"
#include "trainer/user_error.h"

#include <torch/torch.h>

#include <string>

namespace tb::trainer {

/// The device of this process for train.device:
///   "cpu"    the CPU;
///   "cuda"   the local rank's GPU: cuda:<distributed.gpu_ids[local_rank]> when gpu_ids is set,
///            else cuda:<local_rank> (cuda:0 on one process);
///   "cuda:N" GPU N for every rank (ranks may share it over Gloo; NCCL refuses that);
///   "auto"   as "cuda" when this LibTorch has CUDA and a GPU is visible, else the CPU.
/// Throws UserError "device_unavailable" naming train.device (or distributed.gpu_ids) when the
/// build has no CUDA, the GPU does not exist, or it cannot be used (busy, out of memory), and
/// "config_invalid" for a value that is not a device.
/// `key` is what errors call the setting (a command-line tool passes "--device").
torch::Device resolveTrainingDevice(const core::TrainConfig& train,
                                    const core::DistributedConfig& distributed,
                                    const distributed::LaunchInfo& launch,
                                    const std::string& key = "train.device");

/// As resolveTrainingDevice for one process: the device tokenize, compare and bench use.
torch::Device resolveTrainingDevice(const core::TrainConfig& train,
                                    const std::string& key = "train.device");

/// train.precision as it runs on `device`: "auto" is bf16 where the hardware computes bf16 (a CPU
/// with AMX-BF16 or AVX512-BF16; a GPU of compute capability 8.0 or newer), else fp32 (a CPU
/// without them emulates bf16 in fp32: slower, and a preset would learn differently per
/// machine). The other values are themselves.
core::Precision resolvePrecision(core::Precision precision, const torch::Device& device);

/// What runs and why, for the log and hello: "fp32", or "bf16 (auto: the CPU computes bf16:
/// AMX-BF16)", "fp32 (auto: this CPU has neither AMX-BF16 nor AVX512-BF16)".
std::string describePrecision(core::Precision precision, const torch::Device& device);

/// distributed.backend resolved for `device`: "gloo" or "nccl" ("auto": nccl on a CUDA device
/// when the build has NCCL, else gloo). Throws UserError "backend_unsupported" naming
/// distributed.backend for nccl on the CPU or without NCCL.
std::string resolveBackend(const core::DistributedConfig& distributed, const torch::Device& device);

}  // namespace tb::trainer
