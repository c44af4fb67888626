#pragma once
// magvit2-pytorch's VideoTokenizer keyword arguments <-> Tokenbench's run configuration.
//
// Both directions are exact or refused: an argument whose effect Tokenbench cannot reproduce
// (pad_mode "reflect", a dim_cond_expansion_factor other than 4, ...) and a Tokenbench setting
// the reference has no argument for (model.time_padding "replicate", VQ, ...) is an error that
// names it. Training settings of the reference's own trainer (perceptual and GAN loss weights)
// are read, reported as notes, and not carried over.

#include "core/run_config.h"
#include "trainer/weights/pickle_reader.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tb::trainer::weights {

/// A configuration made from VideoTokenizer keyword arguments.
struct KwargsImport {
  /// model: kind magvit2, pixel_range zero_one (the reference's trainer feeds frames in [0, 1]),
  /// the reference's defaults for arguments not given; model.discriminator: the reference's
  /// default discriminator (dim = the latent channels, max_dim 512, attention after every block)
  /// or discr_kwargs; data.image_size, data.num_frames (17, or 1 + the time factor when 16 is not
  /// a multiple of it); loss.quantizer_weight = quantizer_aux_loss_weight; every other key at
  /// Tokenbench's default.
  core::RunConfig config;
  /// One line per argument that cannot be honoured: "pad_mode: ..." (and validation errors of
  /// the resulting configuration, by their Tokenbench path).
  std::vector<std::string> errors;
  /// Arguments read and not used (training settings of the reference's own trainer).
  std::vector<std::string> notes;
};

/// Reads `kwargs`, a JSON object of VideoTokenizer keyword arguments as KWARGS.json holds them
/// (layers as lists or strings, kernel sizes as integers or lists), or an object holding them
/// under "VideoTokenizer" with the clip length under "frames" (data.num_frames).
KwargsImport importVideoTokenizerKwargs(const nlohmann::json& kwargs);

/// A pickled configuration (VideoTokenizer.save()'s "config") as JSON: tuples become arrays,
/// None null; objects become {"__object__": "module.Class"} (an nn.Identity activation) and
/// references {"__global__": "module.name"}. Throws PickleError for a non-dict or non-string key.
nlohmann::json kwargsFromPickle(const PickleValue& config);

/// Keyword arguments from a Tokenbench configuration.
struct KwargsExport {
  nlohmann::ordered_json kwargs;
  /// One line per setting the reference cannot express, starting with its key ("model.kind: ...").
  std::vector<std::string> errors;
};

/// The VideoTokenizer arguments that build `config`'s tokenizer (and, as discr_kwargs when they
/// differ from its default, its frame discriminator).
KwargsExport exportVideoTokenizerKwargs(const core::RunConfig& config);

}  // namespace tb::trainer::weights
