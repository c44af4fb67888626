#pragma once
// Subcommands that build models from a configuration: model-info, init.

#include "core/run_config.h"
#include "trainer/weights/state_dict_io.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace tb::trainer::cli {

/// Reads and validates the configuration of a subcommand: `source` (a file, or "-" for standard
/// input) or, when `source` is empty, the preset `preset`. Prints every error on stderr (with its
/// path) and returns false when it is invalid.
bool loadConfigArgument(const std::string& source, const std::string& preset, core::RunConfig& out);

/// The model-info document for a valid configuration (see modelInfo). Builds the tokenizer and
/// discriminator on the CPU (weights are initialised, never run).
nlohmann::ordered_json modelInfoJson(const core::RunConfig& config);

/// `model-info`: reads `source` (a file, or "-" for standard input) or, when `source` is empty,
/// the preset `preset`; prints one JSON object on stdout. Exit 0; 2 with every error on stderr for
/// an invalid configuration; 1 when the model cannot be built.
///
/// Fields: kind; params {tokenizer (= encoder + decoder + quantizer), encoder, decoder, quantizer,
/// discriminator}; input_shape [C, T, H, W]; token_grid [t, h, w]; tokens_per_clip;
/// bits_per_token; compression_ratio = C x T x H x W x 8 / (tokens x bits_per_token);
/// forward_flops_per_clip: 2 x multiply-adds of all convolutions, linear layers and attention
/// matmuls of encoder, quantizer projections and decoder, from layer shapes (element-wise work
/// not counted); peak_training_memory_bytes at train.batch_size: 16 bytes per tokenizer and
/// discriminator parameter (fp32 weight, gradient, two AdamW moments) plus batch_size x the
/// activation elements a training step keeps (outputs of every conv, linear, norm, activation and
/// attention matrix) x 4 bytes (2 with bf16/fp16); discriminator activations are not included.
int modelInfo(const std::string& source, const std::string& preset);

/// `init`: builds the tokenizer and discriminator seeded by train.seed and writes `out`/
/// {model.safetensors, discriminator.safetensors, config.json} through a temporary folder next to
/// `out` renamed into place. `out` must not exist. Exit 0, 2 for an invalid configuration, 1 on
/// other failures (message on stderr).
int initCheckpoint(const std::string& source, const std::string& preset,
                   const std::filesystem::path& out);

/// Writes the checkpoint folder `out`/{model.safetensors (`tokenizer`), discriminator.safetensors
/// (`discriminator`, when not empty), config.json} through a temporary folder next to `out`
/// renamed into place, so `out` is whole or absent. `metadata` goes into both weight files, with
/// "module" set to "tokenizer" / "discriminator". Throws std::runtime_error when `out` exists or a
/// write fails (nothing is left behind).
void writeCheckpointFolder(const std::filesystem::path& out, const core::RunConfig& config,
                           const weights::NamedTensors& tokenizer,
                           const weights::NamedTensors& discriminator,
                           std::map<std::string, std::string> metadata);

}  // namespace tb::trainer::cli
