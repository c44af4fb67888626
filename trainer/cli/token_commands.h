#pragma once
// Subcommands that run a trained tokenizer: tokenize (videos/images -> token files) and
// detokenize (a token file -> video). Also the checkpoint loader they share with compare.

#include "core/run_config.h"
#include "trainer/models/tokenizer.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace tb::trainer::cli {

/// A tokenizer with the weights of one checkpoint, in eval mode, on `device`.
struct LoadedCheckpoint {
  std::filesystem::path folder;  ///< the checkpoint folder the weights came from
  std::string weights;           ///< "ema.safetensors" or "model.safetensors"
  core::RunConfig config;        ///< the folder's config.json
  std::string kind;   ///< "magvit2", "vqgan" (model.kind) or "classic_vq" (a baseline codec folder)
  std::string label;  ///< a codec's name ("classic VQ, 10 bits/token"); empty for tokenizers
  /// Where the weights come from: an import's name (model.safetensors' source_name metadata),
  /// else "Tokenbench MAGVIT-v2" / "Tokenbench VQGAN", or the codec's label.
  std::string source;
  std::shared_ptr<Tokenizer> tokenizer;
  torch::Device device = torch::kCPU;
};

/// Opens `path`, which is either a checkpoint folder (model.safetensors + config.json, as
/// written by training or `init`), a classic VQ codec folder (codec.safetensors + config.json,
/// as written by `baseline` or into a run's reference/) or a run directory (its newest complete
/// checkpoint). Uses
/// ema.safetensors when the folder has one and `prefer_ema`, else model.safetensors. Throws
/// std::runtime_error naming the file and what is wrong (missing, invalid config, weights that
/// do not fit the configured model). `device` is a train.device value ("auto": CUDA when this
/// build has it and a GPU is visible); not the checkpoint's own, so that a tokenizer trained on a
/// GPU runs on a laptop. UserError "device_unavailable" when it cannot be had.
LoadedCheckpoint loadCheckpoint(const std::filesystem::path& path, bool prefer_ema = true,
                                const std::string& device = "auto");

/// The longest frame count <= `frames` that every one of `tokenizers` codes whole: 1 + k x the
/// time factor for a causal video tokenizer, any count for a per-frame one; 0 when none.
int codableFrames(const std::vector<const Tokenizer*>& tokenizers, int frames, int image_size);

/// A video read whole for tokenize and compare --whole-videos.
struct WholeVideo {
  torch::Tensor pixels;  ///< [3, T, S, S] in [-1, 1]
  int available = 0;     ///< frames the file has (every data.frame_stride-th)
  double fps = 0;
};

/// Every data.frame_stride-th frame of `path` (at most `max_frames` when > 0), its longest prefix
/// all of `tokenizers` code (codableFrames), resized (short side) and centre-cropped to
/// data.image_size. Says on stderr, after `command`, which frames it codes when it drops some.
/// Throws media::MediaError naming the file.
WholeVideo readWholeVideo(const std::filesystem::path& path, const core::DataConfig& data,
                          int max_frames, const std::vector<const Tokenizer*>& tokenizers,
                          const std::string& command);

struct TokenizeArgs {
  std::string checkpoint;
  std::string input;            ///< a video or image file, or a folder scanned recursively
  std::string out;              ///< folder for <clip name>.safetensors files (created)
  int max_clips_per_file = 0;   ///< with clip_frames: at most this many clips (0: all)
  bool raw_weights = false;     ///< use model.safetensors even when EMA weights exist
  std::string device = "auto";  ///< auto, cpu, cuda, cuda:N
  int clip_frames = 0;          ///< 0: each video whole; N: consecutive clips of N frames
  int max_frames = 0;           ///< whole videos: at most this many frames (0: all)
  int chunk = 8;                ///< latent frames coded at a time (0: one pass)
  /// fp32; bf16: the encoder's convolutions under bf16 autocast (the quantizer stays fp32, but a
  /// latent value near a code boundary may round to the other side); auto: bf16 where the
  /// hardware computes it (train.precision's rule)
  std::string precision = "fp32";
};

/// `tokenize`: codes every video whole (every data.frame_stride-th frame, at most max_frames):
/// the longest prefix the tokenizer codes whole, 1 + k x its time factor frames (any count for
/// a per-frame VQGAN), the frames after it dropped and said on stderr; in chunks of `chunk`
/// latent frames whose causal state carries over (Tokenizer::tokenizeVideo: the tokens of one
/// pass, the memory of one chunk). With clip_frames, cuts consecutive clips of that many frames
/// instead (a tail shorter than a clip is dropped). Images become 1-frame clips. Frames are
/// resized (short side to data.image_size) and centre-cropped. Writes
/// `out/<clip name>.safetensors` holding one int32 tensor `tokens` of shape [t, h, w] (a
/// trailing codebook axis when model.quantizer.num_codebooks > 1) with string metadata:
/// source (path as given), frame_start, frame_count, frame_stride, fps, image_size, model_kind,
/// codebook_size, checkpoint, tokenbench_version. Clip names are the file's path relative to
/// the input folder with '/' replaced by "__", without extension, plus "_clip<k>" (4 digits)
/// for clips cut with clip_frames. Also writes out/manifest.json (clip name, source, frame range,
/// grid). Prints each written token file on stdout; warnings for unreadable or too short files go
/// to stderr and the file is skipped. Exit 0 when at least one clip was written, 2 for bad
/// arguments, a bad checkpoint, or when nothing usable was found, 1 on write failures.
int tokenize(const TokenizeArgs& args);

struct DetokenizeArgs {
  std::string checkpoint;
  std::string tokens;  ///< a file written by tokenize
  std::string out;     ///< .gif, .mp4, .mkv, .webm, .avi, .mov (anything writeVideo takes)
  double fps = 0;      ///< 0: the token file's fps metadata, else 8
  bool raw_weights = false;
  std::string device = "auto";  ///< auto, cpu, cuda, cuda:N
  int chunk = 8;                ///< latent frames decoded at a time (0: one pass)
};

/// `detokenize`: decodes a token file back into a video. Exit 0; 2 for a missing or malformed
/// token file (no `tokens` tensor, wrong dtype or rank, indices outside the codebook, a
/// codebook size that differs from the checkpoint's) or a bad checkpoint; 1 on write failures.
int detokenize(const DetokenizeArgs& args);

}  // namespace tb::trainer::cli
