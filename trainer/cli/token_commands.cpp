#include "trainer/cli/token_commands.h"

#include "core/atomic_file.h"
#include "core/checkpoint_files.h"
#include "core/config_io.h"
#include "core/reference_codec_info.h"
#include "core/run_directory.h"
#include "core/safetensors.h"
#include "core/version.h"
#include "trainer/baseline/classic_vq_codec.h"
#include "trainer/data/clip_loader.h"
#include "trainer/data/clip_shards.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_error.h"
#include "trainer/media/media_folder.h"
#include "trainer/torch_compat.h"
#include "trainer/training/checkpoint_store.h"
#include "trainer/training_device.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_decoder.h"
#include "trainer/media/video_encoder.h"
#endif
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>

namespace tb::trainer::cli {
namespace fs = std::filesystem;

namespace {

/// A failure the user can fix (exit 2), as opposed to a write failure (exit 1).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Clip {
  std::string name;
  int frame_start = 0;
  int frame_count = 0;
  double fps = 0;
  torch::Tensor pixels;  // [3, T, S, S]
};

std::string clipBaseName(const fs::path& file, const fs::path& root) {
  fs::path rel = root.empty() ? file.filename() : file.lexically_relative(root);
  rel.replace_extension();
  std::string name = rel.generic_string();
  for (std::size_t pos = 0; (pos = name.find('/', pos)) != std::string::npos; pos += 2) {
    name.replace(pos, 1, "__");
  }
  return name;
}

/// The video whole (its codable prefix, at most args.max_frames frames), or with
/// args.clip_frames its consecutive clips (at most args.max_clips_per_file), or the image as one
/// clip. Throws media::MediaError naming the file.
std::vector<Clip> readClips(const fs::path& file, const fs::path& root, const core::DataConfig& d,
                            const TokenizeArgs& args, const Tokenizer& tokenizer) {
  const std::string base = clipBaseName(file, root);
  std::vector<Clip> clips;
  if (media::hasMediaExtension(file.string(), media::MediaKind::Image)) {
#if TB_WITH_OPENCV
    const media::VideoFrames frames = media::ImageReader::read(file.string());
    clips.push_back(
        {base, 0, 1, 0.0, data::resizeAndCrop(media::framesToTensor(frames), d.image_size)});
    return clips;
#else
    throw media::MediaError(file.string(), "images need a build with OpenCV (TB_WITH_OPENCV)");
#endif
  }
  if (args.clip_frames == 0) {
    WholeVideo whole =
        readWholeVideo(file, d, args.max_frames, {&tokenizer}, "tokenbench-trainer tokenize");
    const int count = static_cast<int>(whole.pixels.size(1));
    clips.push_back({base, 0, count, whole.fps, std::move(whole.pixels)});
    return clips;
  }
#if TB_WITH_FFMPEG
  media::VideoDecoder decoder(file.string());
  const auto& info = decoder.info();
  media::ClipRequest request;
  request.stride = d.frame_stride;
  request.resizeShortSide = d.image_size;
  request.cropSize = d.image_size;
  // The clips `pack` cuts: consecutive, not overlapping.
  const std::vector<int> starts =
      data::clipStarts(info.frameCount, {"videos", d.image_size, args.clip_frames, d.frame_stride});
  if (starts.empty()) {
    const int span = (args.clip_frames - 1) * d.frame_stride + 1;  // source frames of one clip
    throw media::MediaError(
        file.string(), "too short: " + std::to_string(info.frameCount) +
                           " frames, a clip of --clip-frames " + std::to_string(args.clip_frames) +
                           " x data.frame_stride " + std::to_string(d.frame_stride) + " needs " +
                           std::to_string(span));
  }
  for (int k = 0; k < static_cast<int>(starts.size()); ++k) {
    if (args.max_clips_per_file > 0 && k >= args.max_clips_per_file) break;
    request.start = starts[k];
    request.count = args.clip_frames;
    const media::VideoFrames frames = decoder.decode(request);
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "_clip%04d", k);
    clips.push_back(
        {base + suffix, starts[k], args.clip_frames, info.fps, media::framesToTensor(frames)});
  }
  return clips;
#else
  throw media::MediaError(file.string(), "videos need a build with FFmpeg (TB_WITH_FFMPEG)");
#endif
}

std::vector<fs::path> inputFiles(const fs::path& input, fs::path& root) {
  std::error_code ec;
  if (fs::is_directory(input, ec)) {
    root = input;
    std::vector<fs::path> files;
    for (auto kind : {media::MediaKind::Video, media::MediaKind::Image}) {
      for (const auto& f : media::scanMediaFolder(input.string(), kind)) files.emplace_back(f);
    }
    std::sort(files.begin(), files.end());
    if (files.empty())
      throw UsageError(input.string() + ": no video or image files in this folder");
    return files;
  }
  if (!fs::exists(input, ec)) throw UsageError(input.string() + ": no such file or folder");
  root.clear();
  return {input};
}

/// The "__metadata__" of a safetensors file, reading only its header; empty when unreadable.
std::map<std::string, std::string> headerMetadata(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char size_bytes[8] = {};
  if (!in.read(reinterpret_cast<char*>(size_bytes), 8)) return {};
  std::uint64_t size = 0;
  for (int i = 7; i >= 0; --i) size = (size << 8) | size_bytes[i];
  if (size > core::SafetensorsView::kMaxHeaderBytes) return {};
  std::string header(size, '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(size))) return {};
  const auto json = nlohmann::json::parse(header, nullptr, false);
  std::map<std::string, std::string> out;
  if (json.is_object() && json.contains("__metadata__") && json["__metadata__"].is_object())
    for (const auto& [key, value] : json["__metadata__"].items())
      if (value.is_string()) out.emplace(key, value.get<std::string>());
  return out;
}

std::string metadataValue(const std::map<std::string, std::string>& meta, const std::string& key) {
  const auto it = meta.find(key);
  return it == meta.end() ? std::string() : it->second;
}

}  // namespace

int codableFrames(const std::vector<const Tokenizer*>& tokenizers, int frames, int image_size) {
  const auto codes = [&](const Tokenizer& t, int n) {
    const auto latent = [&](int m) { return t.tokenGrid(m, image_size)[0]; };
    return latent(n) >= 1 && (n == 1 || latent(n) > latent(n - 1));
  };
  for (int n = frames; n >= 1; --n)
    if (std::all_of(tokenizers.begin(), tokenizers.end(),
                    [&](const Tokenizer* t) { return codes(*t, n); }))
      return n;
  return 0;
}

WholeVideo readWholeVideo([[maybe_unused]] const fs::path& path,
                          [[maybe_unused]] const core::DataConfig& d,
                          [[maybe_unused]] int max_frames,
                          [[maybe_unused]] const std::vector<const Tokenizer*>& tokenizers,
                          [[maybe_unused]] const std::string& command) {
#if TB_WITH_FFMPEG
  media::VideoDecoder decoder(path.string());
  const auto& info = decoder.info();
  WholeVideo out;
  out.fps = info.fps;
  out.available = info.frameCount >= 1 ? (info.frameCount - 1) / d.frame_stride + 1 : 0;
  const int wanted = max_frames > 0 ? std::min(out.available, max_frames) : out.available;
  const int count = codableFrames(tokenizers, wanted, d.image_size);
  if (count < 1) throw media::MediaError(path.string(), "no frames to code");
  if (count < out.available) {
    std::set<std::int64_t> steps;  // time factors: "4", or "1 and 4" for several tokenizers
    for (const Tokenizer* t : tokenizers) steps.insert(t->timeFactor());
    std::string factors;
    for (const std::int64_t f : steps)
      factors += (factors.empty() ? "" : " and ") + std::to_string(f);
    std::cerr << command << ": " << path.string() << ": coding frames 0-" << count - 1 << " of "
              << out.available;
    if (d.frame_stride > 1) std::cerr << " (every " << d.frame_stride << "th)";
    if (wanted < out.available) std::cerr << "; --max-frames " << max_frames;
    if (count < wanted)
      std::cerr << (tokenizers.size() == 1 ? "; this tokenizer codes" : "; these tokenizers code")
                << " 1 + k x " << factors << " frames, the last " << wanted - count << " dropped";
    std::cerr << "\n";
  }
  media::ClipRequest request;
  request.count = count;
  request.stride = d.frame_stride;
  request.resizeShortSide = d.image_size;
  request.cropSize = d.image_size;
  out.pixels = media::framesToTensor(decoder.decode(request));
  return out;
#else
  throw media::MediaError(path.string(), "videos need a build with FFmpeg (TB_WITH_FFMPEG)");
#endif
}

LoadedCheckpoint loadCheckpoint(const fs::path& path, bool prefer_ema, const std::string& device) {
  std::error_code ec;
  LoadedCheckpoint out;
  // A classic VQ codec folder (baseline) stands where a checkpoint folder does.
  const bool codec = baseline::isCodecFolder(path);
  out.folder = codec ? path : resolveCheckpointFolder(path);
  const fs::path config_file = out.folder / core::checkpoint_files::kConfig;
  const core::ConfigLoad load = core::loadRunConfig(config_file);
  if (!load.ok()) {
    std::string message = config_file.string() + ": invalid configuration";
    for (const auto& e : load.errors) message += "\n  " + e.toString();
    throw std::runtime_error(message);
  }
  out.config = load.config;
  out.kind = core::choiceName(out.config.model.kind);
  core::TrainConfig placement;
  placement.device = device;
  if (codec) {
    out.weights = baseline::kCodecFile;
    out.kind = "classic_vq";
    const auto loaded = baseline::loadCodec(out.folder / out.weights);
    const auto info = core::readReferenceCodecInfo(out.folder / baseline::kReferenceFile);
    out.label = info ? info->name : baseline::classicVqName(loaded->quantizer()->bitsPerToken());
    out.source = out.label;
    out.tokenizer = loaded;
    out.device = resolveTrainingDevice(placement, "--device");
    out.tokenizer->to(out.device);
    out.tokenizer->eval();
    return out;
  }
  out.weights = prefer_ema && fs::exists(out.folder / core::checkpoint_files::kEma, ec)
                    ? core::checkpoint_files::kEma
                    : core::checkpoint_files::kModel;
  try {
    out.tokenizer = makeTokenizer(out.config.model, out.config.data);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(config_file.string() + ": " + e.what());
  }
  // EMA files hold parameters only; buffers keep the values model.safetensors has.
  if (out.weights == core::checkpoint_files::kEma) {
    weights::loadStateDict(*out.tokenizer, out.folder / core::checkpoint_files::kModel, true);
  }
  const auto report = weights::loadStateDict(*out.tokenizer, out.folder / out.weights,
                                             out.weights == core::checkpoint_files::kModel);
  if (!report.unexpected.empty()) {
    throw std::runtime_error((out.folder / out.weights).string() + ": unexpected tensor \"" +
                             report.unexpected.front() + "\"");
  }
  out.source = metadataValue(headerMetadata(out.folder / core::checkpoint_files::kModel),
                             core::checkpoint_files::kSourceNameKey);
  if (out.source.empty())
    out.source = out.config.model.kind == core::ModelKind::Magvit2 ? "Tokenbench MAGVIT-v2"
                                                                   : "Tokenbench VQGAN";
  out.device = resolveTrainingDevice(placement, "--device");
  out.tokenizer->to(out.device);
  out.tokenizer->eval();
  return out;
}

int tokenize(const TokenizeArgs& args) {
  torch::NoGradGuard no_grad;
  LoadedCheckpoint ckpt;
  std::vector<fs::path> files;
  fs::path root;
  try {
    ckpt = loadCheckpoint(args.checkpoint, !args.raw_weights, args.device);
    files = inputFiles(args.input, root);
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer tokenize: " << e.what() << "\n";
    return 2;
  }
  core::Precision precision = core::Precision::Fp32;
  try {
    precision = resolvePrecision(
        core::parseChoiceOrThrow<core::Precision>("--precision", args.precision), ckpt.device);
    if (precision == core::Precision::Fp16 && !ckpt.device.is_cuda())
      throw std::invalid_argument("--precision fp16 needs a CUDA device (--device)");
  } catch (const std::invalid_argument& e) {
    std::cerr << "tokenbench-trainer tokenize: " << e.what() << "\n";
    return 2;
  }
  compat::AutocastScope autocast(ckpt.device.type(),
                                 precision == core::Precision::Fp16 ? at::kHalf : at::kBFloat16,
                                 precision != core::Precision::Fp32);
  const core::DataConfig& d = ckpt.config.data;
  const auto quantizer = ckpt.tokenizer->quantizer();
  if (args.clip_frames > 0 &&
      codableFrames({ckpt.tokenizer.get()}, args.clip_frames, d.image_size) != args.clip_frames) {
    std::cerr << "tokenbench-trainer tokenize: --clip-frames " << args.clip_frames
              << ": this tokenizer codes 1 + k x " << ckpt.tokenizer->timeFactor() << " frames ("
              << codableFrames({ckpt.tokenizer.get()}, args.clip_frames, d.image_size)
              << " is the nearest below)\n";
    return 2;
  }
  const fs::path out(args.out);
  nlohmann::ordered_json manifest = nlohmann::ordered_json::array();
  int skipped = 0;
  try {
    fs::create_directories(out);
    for (const auto& file : files) {
      std::vector<Clip> clips;
      try {
        clips = readClips(file, root, d, args, *ckpt.tokenizer);
      } catch (const media::MediaError& e) {
        std::cerr << "tokenbench-trainer tokenize: skipped " << e.what() << "\n";
        ++skipped;
        continue;
      }
      for (const auto& clip : clips) {
        torch::Tensor tokens =
            ckpt.tokenizer->tokenizeVideo(clip.pixels.unsqueeze(0).to(ckpt.device), args.chunk)
                .squeeze(0);
        tokens = tokens.to(torch::kCPU, torch::kInt32).contiguous();
        const std::vector<std::int64_t> grid(tokens.sizes().begin(), tokens.sizes().end());
        const std::map<std::string, std::string> meta{
            {"format", "tokenbench-tokens"},
            {"source", file.string()},
            {"frame_start", std::to_string(clip.frame_start)},
            {"frame_count", std::to_string(clip.frame_count)},
            {"frame_stride", std::to_string(d.frame_stride)},
            {"whole_video", args.clip_frames == 0 ? "true" : "false"},
            {"fps", std::to_string(clip.fps)},
            {"image_size", std::to_string(d.image_size)},
            {"model_kind", ckpt.kind},
            {"codebook_size", std::to_string(quantizer->codebookSize())},
            {"num_codebooks", std::to_string(quantizer->numCodebooks())},
            {"checkpoint", (ckpt.folder / ckpt.weights).string()},
            {"tokenbench_version", core::versionString()}};
        const fs::path target = out / (clip.name + ".safetensors");
        weights::saveTensors({{"tokens", tokens}}, target, meta);
        manifest.push_back({{"clip", clip.name},
                            {"file", target.filename().string()},
                            {"source", file.string()},
                            {"frame_start", clip.frame_start},
                            {"frame_count", clip.frame_count},
                            {"grid", grid}});
        std::cout << target.string() << "\n" << std::flush;
      }
    }
    if (manifest.empty()) {
      std::cerr << "tokenbench-trainer tokenize: " << args.input << ": no usable clip (" << skipped
                << (skipped == 1 ? " file" : " files") << " skipped)\n";
      return 2;
    }
    core::writeFileAtomically(out / "manifest.json", manifest.dump(2) + "\n");
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer tokenize: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "tokenbench-trainer tokenize: " << manifest.size() << " clips from "
            << files.size() - static_cast<std::size_t>(skipped) << " files into " << out.string();
  if (skipped > 0) std::cerr << " (" << skipped << " skipped)";
  std::cerr << "\n";
  return 0;
}

int detokenize(const DetokenizeArgs& args) {
  torch::NoGradGuard no_grad;
  LoadedCheckpoint ckpt;
  torch::Tensor tokens;
  double fps = args.fps;
  try {
    ckpt = loadCheckpoint(args.checkpoint, !args.raw_weights, args.device);
    const core::SafetensorsFile file = core::SafetensorsFile::read(args.tokens);
    const core::TensorInfo* info = file.find("tokens");
    if (info == nullptr) throw UsageError(args.tokens + ": no tensor named \"tokens\"");
    if (info->dtype != core::DType::I32 && info->dtype != core::DType::I64) {
      throw UsageError(args.tokens + ": tensor \"tokens\" must be I32 or I64");
    }
    const auto quantizer = ckpt.tokenizer->quantizer();
    const std::size_t rank = quantizer->numCodebooks() > 1 ? 4 : 3;
    if (info->shape.size() != rank) {
      throw UsageError(args.tokens + ": tensor \"tokens\" must have " + std::to_string(rank) +
                       " dimensions ([t, h, w" + (rank == 4 ? ", codebooks]" : "]") +
                       ") for this checkpoint");
    }
    const auto& meta = file.metadata();
    const std::string made_with = metadataValue(meta, "codebook_size");
    if (!made_with.empty() && made_with != std::to_string(quantizer->codebookSize())) {
      throw UsageError(args.tokens + ": made with codebook_size " + made_with + ", but " +
                       ckpt.folder.string() + " has " + std::to_string(quantizer->codebookSize()));
    }
    tokens = weights::readTensor(file, *info).to(torch::kInt64);
    const std::int64_t lo = tokens.min().item<std::int64_t>(),
                       hi = tokens.max().item<std::int64_t>();
    if (lo < 0 || hi >= quantizer->codebookSize()) {
      throw UsageError(args.tokens + ": token values span [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], outside the codebook [0, " +
                       std::to_string(quantizer->codebookSize()) + ")");
    }
    if (fps <= 0) {
      const std::string text = metadataValue(meta, "fps");
      fps = text.empty() ? 0.0 : std::atof(text.c_str());
      if (!(fps > 0)) fps = 8.0;
    }
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer detokenize: " << e.what() << "\n";
    return 2;
  }
#if TB_WITH_FFMPEG
  try {
    const torch::Tensor video =
        ckpt.tokenizer->decodeVideo(tokens.unsqueeze(0).to(ckpt.device), args.chunk).squeeze(0);
    media::writeVideo(args.out, media::tensorToFrames(video, fps));
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer detokenize: " << e.what() << "\n";
    return 1;
  }
  std::cout << args.out << "\n";
  return 0;
#else
  std::cerr << "tokenbench-trainer detokenize: writing videos needs a build with FFmpeg\n";
  return 2;
#endif
}

}  // namespace tb::trainer::cli
