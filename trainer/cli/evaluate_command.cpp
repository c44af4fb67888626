#include "trainer/cli/evaluate_command.h"

#include "core/config_choices.h"
#include "core/duration_text.h"
#include "core/sha256.h"
#include "core/trainer_command.h"
#include "core/version.h"
#include "trainer/cli/token_commands.h"
#include "trainer/data/clip_loader.h"
#include "trainer/evaluation/feature_network.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/evaluation/validator.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_folder.h"
#include "trainer/torch_compat.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace tb::trainer::cli {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr const char* kPrefix = "tokenbench-trainer evaluate: ";
// What papers evaluate on: ImageNet's validation images and UCF-101's test split (split 1).
constexpr std::int64_t kPaperImages = 50000;
constexpr std::int64_t kUcf101TestClips = 3783;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One tokenizer under evaluation.
struct Candidate {
  std::string name;
  LoadedCheckpoint checkpoint;
  std::unique_ptr<Validator> validator;
  std::optional<metrics::FeatureStatistics> fakes;
  std::vector<torch::Tensor> pending;  // reconstructions (uint8) awaiting a feature batch
};

std::string cacheFolder(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return (fs::path(xdg) / "tokenbench" / "evaluation").string();
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".cache" / "tokenbench" / "evaluation").string();
  return (fs::temp_directory_path() / "tokenbench-evaluation").string();
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// One progress line on stderr, rewritten in place: done/total, rate and ETA.
class Progress {
 public:
  Progress(std::string what, std::int64_t total, std::string unit)
      : m_what(std::move(what)), m_total(total), m_unit(std::move(unit)) {}
  // At most one line a second (and the last), so that a log file does not fill with them.
  void update(std::int64_t done) {
    const auto now = Clock::now();
    if (done < m_total && now - m_shown < std::chrono::seconds(1)) return;
    m_shown = now;
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const int width = 30;
    const int filled = m_total > 0 ? static_cast<int>(width * done / m_total) : width;
    std::cerr << "\r" << m_what << " [" << std::string(filled, '#')
              << std::string(width - filled, '.') << "] " << done << "/" << m_total << ", "
              << fixed(rate, 2) << " " << m_unit << "/s, ETA "
              << core::formatDuration(rate > 0 ? (m_total - done) / rate : -1) << "   "
              << std::flush;
  }
  void finish() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - m_start).count();
    std::cerr << "\r" << m_what << ": " << m_total << " " << m_unit << " in "
              << core::formatDuration(elapsed) << std::string(40, ' ') << "\n";
  }

 private:
  std::string m_what;
  std::int64_t m_total;
  std::string m_unit;
  Clock::time_point m_start = Clock::now();
  Clock::time_point m_shown;
};

std::vector<std::string> sampleWarnings(const char* metric, bool videos, std::int64_t n,
                                        std::int64_t dim) {
  std::vector<std::string> out;
  const std::string name = metric == std::string("rfid") ? "rFID" : "rFVD";
  if (n <= dim) {
    out.push_back(name + " from " + std::to_string(n) + " samples, not more than the " +
                  std::to_string(dim) +
                  " feature dimensions: the covariances are singular and the value is biased "
                  "upward; it compares only with figures from the same N");
  }
  const std::int64_t papers = videos ? kUcf101TestClips : kPaperImages;
  if (n < papers) {
    out.push_back(name + " from " + std::to_string(n) + " " + (videos ? "clips" : "images") +
                  ": papers use " +
                  (videos ? "the whole UCF-101 test split (3,783 clips)"
                          : "the 50,000 ImageNet validation images") +
                  "; the Frechet distance falls as N grows, so a smaller N reads worse than "
                  "the published figures");
  }
  return out;
}

std::string cardMarkdown(const Json& card) {
  std::ostringstream md;
  md << "# Evaluation card\n\n";
  const Json& data = card["data"];
  md << "- Data: `" << data["folder"].get<std::string>() << "` ("
     << data["split"].get<std::string>() << "), " << data["type"].get<std::string>() << ", "
     << data["usable_files"] << " usable files, " << data["evaluated"] << " evaluated, "
     << data["skipped"].size() << " skipped\n";
  const Json& protocol = card["protocol"];
  md << "- Protocol: " << protocol["resize_crop"].get<std::string>();
  if (protocol.contains("frames"))
    md << "; " << protocol["frames"] << " frames from the first, stride "
       << protocol["frame_stride"];
  md << "; reconstructions rounded to 8 bits\n";
  if (card.contains("feature_network")) {
    const Json& net = card["feature_network"];
    md << "- Feature network: " << net["network"].get<std::string>() << ", `"
       << net["file"].get<std::string>() << "` (SHA-256 " << net["sha256"].get<std::string>()
       << "); " << net["preprocessing"].get<std::string>() << "\n";
    md << "- Reals' statistics: "
       << (card["reals_cached"].get<bool>() ? "reused from " : "written to ") << "`"
       << card["reals_cache"].get<std::string>() << "`\n";
  }
  const Json& sw = card["software"];
  md << "- Software: Tokenbench " << sw["tokenbench"].get<std::string>() << ", LibTorch "
     << sw["libtorch"].get<std::string>() << ", device " << sw["device"].get<std::string>()
     << "\n\n";
  md << "| tokenizer | checkpoint | PSNR | SSIM | LPIPS |";
  const std::string metric = card.value("metric", std::string());
  if (!metric.empty()) md << " " << (metric == "rfid" ? "rFID" : "rFVD") << " (N) |";
  md << "\n|---|---|---|---|---|" << (metric.empty() ? "" : "---|") << "\n";
  for (const Json& t : card["tokenizers"]) {
    md << "| " << t["name"].get<std::string>() << " | `" << t["checkpoint"].get<std::string>()
       << "` | " << fixed(t["psnr"].get<double>(), 2) << " | " << fixed(t["ssim"].get<double>(), 4)
       << " | " << (t.contains("lpips") ? fixed(t["lpips"].get<double>(), 4) : "-") << " |";
    if (!metric.empty())
      md << " " << fixed(t[metric].get<double>(), 2) << " (" << t[metric + "_samples"] << ") |";
    md << "\n";
  }
  if (!card["warnings"].empty()) {
    md << "\n## Warnings\n\n";
    for (const Json& w : card["warnings"]) md << "- " << w.get<std::string>() << "\n";
  }
  if (!data["skipped"].empty()) {
    md << "\n## Skipped files\n\n";
    for (const Json& s : data["skipped"])
      md << "- `" << s["path"].get<std::string>() << "`: " << s["reason"].get<std::string>()
         << "\n";
  }
  return md.str();
}

void writeText(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error(file.string() + ": cannot write");
}

int run(const EvaluateArgs& args) {
  if (args.checkpoints.empty())
    throw UsageError("evaluate needs at least one --checkpoint NAME=PATH");
  if (args.data.empty() || !fs::is_directory(args.data))
    throw UsageError("--data " + args.data + ": not a folder of images or videos");
  if (args.lpips_backbone.empty() != args.lpips_lin.empty())
    throw UsageError("--lpips-backbone and --lpips-lin go together");

  // The tokenizers, each on its own device as compare loads them.
  std::vector<Candidate> tokenizers;
  for (const std::string& word : args.checkpoints) {
    Candidate t;
    try {
      const auto [name, path] = core::parseCompareEntry(word);
      for (const Candidate& other : tokenizers)
        if (other.name == name)
          throw UsageError("--checkpoint: the name \"" + name + "\" is given twice");
      t.name = name;
      t.checkpoint = loadCheckpoint(path, !args.raw_weights, args.device);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    tokenizers.push_back(std::move(t));
  }
  const torch::Device device = tokenizers.front().checkpoint.device;

  // The data, as validation reads it: whole frames, centre crop, no flip, first frames.
  core::DataConfig d = tokenizers.front().checkpoint.config.data;
  bool videos = false;
  if (args.data_type.empty()) {
    videos = media::scanMediaFolder(args.data, media::MediaKind::Image).empty();
  } else {
    videos = core::parseChoiceOrThrow<core::DataType>("--data-type", args.data_type) ==
             core::DataType::Videos;
  }
  d.type = videos ? core::DataType::Videos : core::DataType::Images;
  d.path = args.data;
  d.valid_path.clear();
  d.valid_fraction = 0;
  if (args.image_size > 0) d.image_size = args.image_size;
  d.num_frames = videos ? (args.frames > 0 ? args.frames : d.num_frames) : 1;
  d.clip_start = core::ClipStart::First;
  d.crop = core::CropMode::Center;
  d.hflip = false;
  d.train_crop = 0;
  d.train_frames = 0;
  const bool want_fid = !args.fid_weights.empty(), want_fvd = !args.fvd_weights.empty();
  if (want_fid && videos)
    throw UsageError("--fid-weights: " + args.data + " holds videos; rFVD takes --fvd-weights");
  if (want_fvd && !videos)
    throw UsageError("--fvd-weights: " + args.data + " holds images; rFID takes --fid-weights");
  if (want_fvd && d.num_frames < metrics::kFvdMinFrames)
    throw UsageError("--frames " + std::to_string(d.num_frames) +
                     ": the I3D of rFVD needs at least " + std::to_string(metrics::kFvdMinFrames) +
                     " frames per clip");

  std::optional<metrics::FeatureNetwork> network;
  metrics::Lpips lpips{nullptr};
  try {
    if (want_fid || want_fvd)
      network.emplace(videos, want_fid ? args.fid_weights : args.fvd_weights, device);
    if (!args.lpips_backbone.empty()) {
      lpips = metrics::loadLpips(metrics::parseLpipsNet(args.lpips_net), args.lpips_backbone,
                                 args.lpips_lin);
      lpips->to(device);
    }
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }

  std::unique_ptr<data::ClipDataset> dataset;
  try {
    dataset = std::make_unique<data::ClipDataset>(d, 0);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  const std::int64_t usable = dataset->trainSize();
  const std::int64_t n = args.num > 0 ? std::min(args.num, usable) : usable;
  if (args.num > usable)
    std::cerr << kPrefix << "--num " << args.num << ": the folder has " << usable
              << " usable files; evaluating " << n << "\n";
  Json skipped = Json::array();
  for (const auto& s : dataset->indexSkips())
    skipped.push_back({{"path", s.path}, {"reason", s.reason}});

  // The reals' statistics: cached under the hash of everything they depend on.
  std::optional<metrics::FeatureStatistics> reals;
  fs::path cache_file;
  bool reals_cached = false;
  if (network) {
    core::Sha256 key;
    key.update(std::string(network->metric()) + "\n" + network->sha256() + "\n" +
               std::to_string(d.image_size) + "\n" + std::to_string(d.num_frames) + "\n" +
               std::to_string(d.frame_stride) + "\ncentre crop, first frame\n");
    Progress hashing("hashing the data", n, "files");
    for (std::int64_t i = 0; i < n; ++i) {
      const std::string source = dataset->trainSource(i);
      key.update(source + "\n" + core::sha256OfFile(fs::path(args.data) / source) + "\n");
      if (i % 64 == 0) hashing.update(i);
    }
    hashing.finish();
    cache_file = fs::path(cacheFolder(args.cache)) /
                 (key.hexDigest() + "." + network->metric() + ".safetensors");
    std::error_code ec;
    if (fs::is_regular_file(cache_file, ec)) {
      try {
        reals = metrics::FeatureStatistics::load(cache_file, network->dim());
        reals_cached = reals->count() == n;
      } catch (const std::exception& e) {
        std::cerr << kPrefix << "ignoring the cached statistics: " << e.what() << "\n";
      }
    }
    if (!reals_cached) reals.emplace(network->dim());
    for (Candidate& t : tokenizers) t.fakes.emplace(network->dim());
  }
  for (Candidate& t : tokenizers)
    t.validator =
        std::make_unique<Validator>(*t.checkpoint.tokenizer, lpips, t.checkpoint.config.loss.recon);

  // One pass: each clip decoded once, reconstructed by every tokenizer; features in batches.
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> pending_reals;
  const auto flush = [&] {
    if (!network) return;
    if (!reals_cached && !pending_reals.empty()) reals->add(network->features(pending_reals));
    pending_reals.clear();
    for (Candidate& t : tokenizers) {
      if (!t.pending.empty()) t.fakes->add(network->features(t.pending));
      t.pending.clear();
    }
  };
  Progress progress("evaluating " + std::to_string(tokenizers.size()) + " tokenizer(s)", n,
                    videos ? "videos" : "images");
  const int batch = args.batch > 0 ? args.batch : (videos ? 4 : 16);
  for (std::int64_t i = 0; i < n; ++i) {
    const torch::Tensor clip = dataset->trainSample(i);
    if (network && !reals_cached)
      pending_reals.push_back(media::framesToBytes(media::tensorToFrames(clip)));
    for (Candidate& t : tokenizers) {
      ClipValidation v = t.validator->score(clip, t.checkpoint.device);
      if (network) t.pending.push_back(media::framesToBytes(v.scores.decoded));
    }
    // Batches of the same clips whether or not the reals come from the cache, so that a
    // tokenizer's figure is the same to the bit either way.
    if ((i + 1) % batch == 0) flush();
    progress.update(i + 1);
  }
  flush();
  progress.finish();
  for (const auto& s : dataset->takeNewSkips())
    skipped.push_back({{"path", s.path}, {"reason", s.reason}});

  // metrics.json and the card.
  const fs::path out = args.out;
  fs::create_directories(out);
  Json warnings = Json::array();
  Json card;
  card["data"] = {
      {"folder", args.data},
      {"split", args.split.empty() ? fs::path(args.data).filename().string() : args.split},
      {"type", videos ? "videos" : "images"},
      {"usable_files", usable},
      {"evaluated", n},
      {"skipped", skipped}};
  card["protocol"] = {
      {"resize_crop", "short side resized to " + std::to_string(d.image_size) +
                          " (bilinear), centre crop " + std::to_string(d.image_size) + " x " +
                          std::to_string(d.image_size)},
      {"image_size", d.image_size}};
  if (videos) {
    card["protocol"]["frames"] = d.num_frames;
    card["protocol"]["frame_stride"] = d.frame_stride;
  }
  if (network) {
    card["metric"] = network->metric();
    card["feature_network"] = {{"file", network->file()},
                               {"sha256", network->sha256()},
                               {"network", network->networkName()},
                               {"preprocessing", network->preprocessing()}};
    card["reals_cache"] = cache_file.string();
    card["reals_cached"] = reals_cached;
    if (reals->count() < 2)
      throw UsageError(std::string(network->metric()) + " needs at least 2 clips, there are " +
                       std::to_string(reals->count()));
    for (const std::string& w :
         sampleWarnings(network->metric(), videos, reals->count(), network->dim()))
      warnings.push_back(w);
    if (!reals_cached) {
      std::error_code ec;
      fs::create_directories(cache_file.parent_path(), ec);
      try {
        reals->save(cache_file, {{"data", args.data}, {"clips", std::to_string(n)}});
      } catch (const std::exception& e) {
        warnings.push_back("the reals' statistics were not cached: " + std::string(e.what()));
      }
    }
  }
  if (!skipped.empty())
    warnings.push_back(std::to_string(skipped.size()) + " file(s) skipped (listed below)");
  card["software"] = {{"tokenbench", core::versionString()},
                      {"libtorch", compat::torchVersion()},
                      {"device", device.str()}};
  Json rows = Json::array();
  for (const Candidate& t : tokenizers) {
    const ValidationSummary& s = t.validator->summary();
    Json row;
    row["name"] = t.name;
    row["checkpoint"] = t.checkpoint.folder.string();
    row["weights"] = t.checkpoint.weights;
    row["kind"] = t.checkpoint.kind;
    row["clips"] = s.clips;
    row["psnr"] = s.psnr;
    row["ssim"] = s.ssim;
    if (s.has_lpips) row["lpips"] = s.lpips;
    if (network) {
      row[network->metric()] = metrics::frechetDistance(*reals, *t.fakes);
      row[std::string(network->metric()) + "_samples"] = reals->count();
    }
    rows.push_back(row);
  }
  card["tokenizers"] = rows;
  card["warnings"] = warnings;
  writeText(out / "metrics.json", Json{{"tokenizers", rows}}.dump(2) + "\n");
  writeText(out / "card.json", card.dump(2) + "\n");
  const std::string md = cardMarkdown(card);
  writeText(out / "card.md", md);
  std::cout << md;
  return 0;
}

}  // namespace

int evaluate(const EvaluateArgs& args) {
  try {
    return run(args);
  } catch (const UsageError& e) {
    std::cerr << kPrefix << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {  // a write that failed, a file that broke mid-way
    std::cerr << kPrefix << e.what() << "\n";
    return 1;
  }
}

}  // namespace tb::trainer::cli
