#include "trainer/cli/compare_command.h"

#include "core/atomic_file.h"
#include "core/compare_report.h"
#include "trainer/cli/token_commands.h"
#include "trainer/data/clip_loader.h"
#include "trainer/evaluation/clip_scores.h"
#include "trainer/evaluation/feature_network.h"
#include "trainer/evaluation/frechet_distance.h"
#include "trainer/evaluation/lpips.h"
#include "trainer/evaluation/validator.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_error.h"
#include "trainer/media/media_folder.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif
#if TB_WITH_OPENCV
#include <opencv2/imgproc.hpp>
#include "trainer/media/image_reader.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <stdexcept>

namespace tb::trainer::cli {
namespace {

/// --whole-videos: latent frames coded at a time (the figures of one pass, bounded memory).
constexpr std::int64_t kWholeVideoChunk = 8;

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Scores {
  double psnr = 0, ssim = 0, lpips = 0;
  std::vector<double> frame_psnr, frame_ssim;  ///< by frame position
};

struct Entry {
  std::string name;
  LoadedCheckpoint checkpoint;
};

std::vector<Entry> loadEntries(const core::CompareCommand& command) {
  std::vector<Entry> entries;
  for (const auto& [name, path] : command.entries) {
    // The name becomes a file name (clip_<k>/<name>.png) and a column of the review.
    if (const std::string problem = core::compareEntryNameProblem(name); !problem.empty())
      throw UsageError("--checkpoint \"" + name + "=" + path + "\": " + problem);
    for (const auto& other : entries) {
      if (other.name == name)
        throw UsageError("--checkpoint: the name \"" + name + "\" is given twice");
    }
    Entry e{name, {}};
    try {
      e.checkpoint = loadCheckpoint(path, !command.raw_weights, command.device);
    } catch (const std::exception& ex) {
      throw UsageError(ex.what());
    }
    entries.push_back(std::move(e));
  }
  if (entries.empty()) throw UsageError("compare needs at least one --checkpoint NAME=PATH");
  const auto& first = entries.front().checkpoint.config.data;
  for (const auto& e : entries) {
    // An imported VQGAN (its attention placed by model.vqgan.resolution) codes any size its
    // levels divide, frame by frame; other tokenizers are compared at the size they know.
    const core::ModelConfig& m = e.checkpoint.config.model;
    const bool any_size = m.kind == core::ModelKind::Vqgan && m.vqgan.resolution > 0 &&
                          first.image_size % (1 << (m.vqgan.channel_mult.size() - 1)) == 0;
    if (!any_size && e.checkpoint.config.data.image_size != first.image_size) {
      throw UsageError(e.checkpoint.folder.string() + ": data.image_size " +
                       std::to_string(e.checkpoint.config.data.image_size) + " differs from " +
                       std::to_string(first.image_size) + " of " +
                       entries.front().checkpoint.folder.string() +
                       ": tokenizers are compared on the same clips");
    }
  }
  return entries;
}

// Every file's first clip (or procedural clips), centre crop, no flip: whole clips, as
// validation scores them, never the training windows (data.train_crop, data.train_frames).
/// --whole-videos: the first command.clips videos of the folder, each whole (the longest prefix
/// every tokenizer codes, at most --max-frames).
std::vector<std::pair<std::string, torch::Tensor>> loadWholeVideos(
    const core::CompareCommand& command, const core::DataConfig& d,
    const std::vector<Entry>& entries) {
  if (command.data_dir.empty() || command.data_type != "videos")
    throw UsageError("--whole-videos needs --data DIR of videos");
  std::vector<const Tokenizer*> tokenizers;
  for (const Entry& e : entries) tokenizers.push_back(e.checkpoint.tokenizer.get());
  std::vector<std::string> files =
      media::scanMediaFolder(command.data_dir, media::MediaKind::Video);
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, torch::Tensor>> clips;
  for (const std::string& file : files) {
    if (static_cast<int>(clips.size()) >= command.clips) break;
    try {
      clips.emplace_back(file,
                         readWholeVideo(file, d, command.max_frames, tokenizers, "compare").pixels);
    } catch (const media::MediaError& e) {
      std::cerr << "compare: skipping " << e.what() << "\n";
    }
  }
  return clips;
}

std::vector<std::pair<std::string, torch::Tensor>> loadClips(const core::CompareCommand& command,
                                                             core::DataConfig d) {
  if (!command.data_dir.empty()) {
    d.type = core::parseChoiceOrThrow<core::DataType>("--data-type", command.data_type);
    d.path = command.data_dir;
  } else {
    d.type = core::DataType::Synthetic;
  }
  if (d.type == core::DataType::Images) d.num_frames = 1;
  d.valid_fraction = 0;
  d.clip_start = core::ClipStart::First;
  d.crop = core::CropMode::Center;
  d.hflip = false;
  d.train_crop = 0;
  d.train_frames = 0;
  std::vector<std::pair<std::string, torch::Tensor>> clips;
  try {
    data::ClipDataset dataset(d, 0);
    for (const auto& s : dataset.indexSkips())
      std::cerr << "compare: skipping " << s.path << ": " << s.reason << "\n";
    const std::int64_t n = std::min<std::int64_t>(command.clips, dataset.trainSize());
    for (std::int64_t i = 0; i < n; ++i)
      clips.emplace_back(dataset.trainSource(i), dataset.trainSample(i));
  } catch (const data::DataError& e) {
    throw UsageError(e.what());
  }
  return clips;
}

#if TB_WITH_OPENCV
// One grid cell: an RGB frame scaled (nearest) to `cell` pixels wide, with text lines below.
cv::Mat cellImage(const media::VideoFrames& clip, int cell, const std::vector<std::string>& lines) {
  const int t = clip.count / 2;
  cv::Mat frame(clip.height, clip.width, CV_8UC3, const_cast<uint8_t*>(clip.frame(t)));
  cv::Mat scaled;
  cv::resize(frame, scaled, cv::Size(cell, cell * clip.height / clip.width), 0, 0,
             cv::INTER_NEAREST);
  const int line_h = 16;
  cv::Mat out(scaled.rows + line_h * static_cast<int>(lines.size()) + 4, cell, CV_8UC3,
              cv::Scalar(255, 255, 255));
  scaled.copyTo(out(cv::Rect(0, 0, scaled.cols, scaled.rows)));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    cv::putText(out, lines[i], cv::Point(3, scaled.rows + line_h * static_cast<int>(i + 1)),
                cv::FONT_HERSHEY_SIMPLEX, 0.38, cv::Scalar(0, 0, 0), 1, cv::LINE_AA);
  }
  return out;
}
#endif

#if TB_WITH_OPENCV
// The clip's frames side by side, left to right: one image of count x width by height.
media::VideoFrames frameStrip(const media::VideoFrames& clip) {
  media::VideoFrames strip;
  strip.width = clip.width * clip.count;
  strip.height = clip.height;
  strip.count = 1;
  strip.rgb.resize(strip.frameBytes());
  const std::size_t row = static_cast<std::size_t>(clip.width) * 3;
  for (int t = 0; t < clip.count; ++t) {
    for (int y = 0; y < clip.height; ++y) {
      std::copy_n(clip.frame(t) + y * row, row, strip.rgb.data() + y * row * clip.count + t * row);
    }
  }
  return strip;
}
#endif

// rFID over every compared frame (--fid-weights) and rFVD over the compared clips
// (--fvd-weights) into the report's means; frames[c] holds clip c's original, then each
// tokenizer's reconstruction.
void addFrechetDistances(const core::CompareCommand& command,
                         const std::vector<std::vector<media::VideoFrames>>& frames,
                         const torch::Device& device, core::CompareReport& report) {
  for (const bool videos : {false, true}) {
    const std::string& file = videos ? command.fvd_weights : command.fid_weights;
    if (file.empty()) continue;
    if (videos && frames.front().front().count < metrics::kFvdMinFrames) {
      throw UsageError("--fvd-weights: the compared clips have " +
                       std::to_string(frames.front().front().count) + " frames, the I3D needs " +
                       std::to_string(metrics::kFvdMinFrames));
    }
    std::unique_ptr<metrics::FeatureNetwork> network;
    try {
      network = std::make_unique<metrics::FeatureNetwork>(videos, file, device);
    } catch (const std::exception& e) {
      throw UsageError(std::string(videos ? "--fvd-weights: " : "--fid-weights: ") + e.what());
    }
    const std::size_t tokenizers = frames.front().size() - 1;
    metrics::FeatureStatistics reals(network->dim());
    std::vector<metrics::FeatureStatistics> fakes(tokenizers,
                                                  metrics::FeatureStatistics(network->dim()));
    for (const auto& clip : frames) {
      reals.add(network->features({media::framesToBytes(clip[0])}));
      for (std::size_t k = 0; k < tokenizers; ++k)
        fakes[k].add(network->features({media::framesToBytes(clip[k + 1])}));
    }
    if (reals.count() < 2) {
      throw UsageError(std::string(videos ? "rFVD" : "rFID") + " needs at least 2 " +
                       (videos ? "clips" : "frames") + ", compare has " +
                       std::to_string(reals.count()));
    }
    for (std::size_t k = 0; k < tokenizers; ++k)
      (videos ? report.mean[k].rfvd : report.mean[k].rfid) =
          metrics::frechetDistance(reals, fakes[k]);
    (videos ? report.rfvd_samples : report.rfid_samples) = reals.count();
    std::cerr << "compare: " << (videos ? "rFVD" : "rFID") << " from " << reals.count()
              << (videos ? " clips" : " frames")
              << ": far fewer than papers use (50,000 images; UCF-101's 3,783 test clips), so "
                 "it is biased upward and ranks these tokenizers only\n";
  }
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

int compare(const core::CompareCommand& command) {
  try {
    const std::vector<Entry> entries = loadEntries(command);
    const auto clips =
        command.whole_videos
            ? loadWholeVideos(command, entries.front().checkpoint.config.data, entries)
            : loadClips(command, entries.front().checkpoint.config.data);
    if (clips.empty()) throw UsageError("compare: no clips to compare");
    metrics::Lpips lpips{nullptr};
    if (command.lpips_backbone.empty() != command.lpips_lin.empty()) {
      throw UsageError("--lpips-backbone and --lpips-lin go together");
    }
    if (!command.lpips_backbone.empty()) {
      try {
        lpips = metrics::loadLpips(metrics::parseLpipsNet(command.lpips_net),
                                   command.lpips_backbone, command.lpips_lin);
        lpips->to(entries.front().checkpoint.device);
      } catch (const std::exception& e) {
        throw UsageError(e.what());
      }
    }
    const fs::path out = command.out_dir;
    fs::create_directories(out);

    // Each tokenizer scored by the Validator that training's validation uses, so the figures agree.
    std::vector<Validator> validators;
    for (const Entry& e : entries) {
      validators.emplace_back(*e.checkpoint.tokenizer, lpips, e.checkpoint.config.loss.recon);
      if (command.whole_videos) validators.back().setTimeChunk(kWholeVideoChunk);
    }
    std::vector<std::vector<Scores>> scores(clips.size(), std::vector<Scores>(entries.size()));
    std::vector<std::vector<media::VideoFrames>> frames(
        clips.size());  // original, then each tokenizer
    for (std::size_t c = 0; c < clips.size(); ++c) {
      frames[c].push_back(media::tensorToFrames(clips[c].second, 8.0));
      for (std::size_t k = 0; k < entries.size(); ++k) {
        ClipValidation v = validators[k].score(clips[c].second, entries[k].checkpoint.device);
        Scores& s = scores[c][k];
        s.frame_psnr = v.scores.frame_psnr;
        s.frame_ssim = v.scores.frame_ssim;
        s.psnr = v.scores.psnr;
        s.ssim = v.scores.ssim;
        s.lpips = v.lpips;
        frames[c].push_back(std::move(v.scores.decoded));
      }
    }

    // metrics.json (core's compare report, which the Compare page reads), metrics.csv
    core::CompareReport report;
    for (const auto& e : entries) {
      core::CompareTokenizer t;
      t.name = e.name;
      t.checkpoint = e.checkpoint.folder.string();
      t.weights = e.checkpoint.weights;
      t.model_kind = e.checkpoint.kind;
      t.label = e.checkpoint.label;
      t.source = e.checkpoint.source;
      if (!frames.empty()) {
        const auto grid = e.checkpoint.tokenizer->tokenGrid(frames.front().front().count,
                                                            frames.front().front().width);
        t.token_grid.assign(grid.begin(), grid.end());
      }
      t.bits_per_token = e.checkpoint.tokenizer->quantizer()->bitsPerToken();
      report.tokenizers.push_back(std::move(t));
    }
    auto reportScores = [&](const Scores& s) {
      core::CompareScores c;
      c.psnr = s.psnr;
      c.ssim = s.ssim;
      if (lpips) c.lpips = s.lpips;
      return c;
    };
    std::string csv = "clip,source,tokenizer,psnr,ssim" + std::string(lpips ? ",lpips" : "") + "\n";
    for (std::size_t c = 0; c < clips.size(); ++c) {
      const media::VideoFrames& original = frames[c].front();
      core::CompareClip clip;
      clip.index = static_cast<int>(c);
      clip.source = clips[c].first;
      clip.frames = static_cast<int>(original.count);
      clip.width = static_cast<int>(original.width);
      clip.height = static_cast<int>(original.height);
      for (std::size_t k = 0; k < entries.size(); ++k) {
        clip.scores.push_back(reportScores(scores[c][k]));
        csv += std::to_string(c) + "," + clips[c].first + "," + entries[k].name + "," +
               fixed(scores[c][k].psnr, 4) + "," + fixed(scores[c][k].ssim, 5) +
               (lpips ? "," + fixed(scores[c][k].lpips, 5) : "") + "\n";
      }
      report.clips.push_back(std::move(clip));
    }
    // The means over clips, and by frame position over the clips that reach it (whole videos
    // differ in length): a causal tokenizer's first frame is coded alone and often worse.
    for (std::size_t k = 0; k < entries.size(); ++k) {
      Scores m;
      const double n = static_cast<double>(clips.size());
      std::vector<double> reaching;
      for (std::size_t c = 0; c < clips.size(); ++c) {
        const Scores& s = scores[c][k];
        m.psnr += s.psnr / n;
        m.ssim += s.ssim / n;
        m.lpips += s.lpips / n;
        if (s.frame_psnr.size() > m.frame_psnr.size()) {
          m.frame_psnr.resize(s.frame_psnr.size(), 0.0);
          m.frame_ssim.resize(s.frame_psnr.size(), 0.0);
          reaching.resize(s.frame_psnr.size(), 0.0);
        }
        for (std::size_t t = 0; t < s.frame_psnr.size() && t < s.frame_ssim.size(); ++t) {
          m.frame_psnr[t] += s.frame_psnr[t];
          m.frame_ssim[t] += s.frame_ssim[t];
          reaching[t] += 1;
        }
      }
      for (std::size_t t = 0; t < m.frame_psnr.size(); ++t) {
        m.frame_psnr[t] /= reaching[t];
        m.frame_ssim[t] /= reaching[t];
      }
      report.mean.push_back(reportScores(m));
      report.per_frame.push_back({m.frame_psnr, m.frame_ssim});
    }
    // The flags, else the first checkpoint's eval.fid_weights / eval.fvd_weights when the files
    // are on this machine (a configuration may name another machine's).
    core::CompareCommand frechet = command;
    const core::EvalConfig& eval = entries.front().checkpoint.config.eval;
    for (auto [flag, configured, key, metric] :
         {std::tuple{&frechet.fid_weights, eval.fid_weights, "eval.fid_weights", "rFID"},
          std::tuple{&frechet.fvd_weights, eval.fvd_weights, "eval.fvd_weights", "rFVD"}}) {
      if (!flag->empty() || configured.empty()) continue;
      std::error_code ec;
      if (fs::is_regular_file(configured, ec)) {
        *flag = configured;
      } else {
        std::cerr << "compare: " << key << " of " << entries.front().checkpoint.folder.string()
                  << " (" << configured << ") is not here: no " << metric << "\n";
      }
    }
    addFrechetDistances(frechet, frames, entries.front().checkpoint.device, report);
    core::writeFileAtomically(out / "metrics.json", core::toJsonText(report));
    core::writeFileAtomically(out / "metrics.csv", csv);

#if TB_WITH_FFMPEG
    // clip_<k>.gif: original | each tokenizer, side by side.
    for (std::size_t c = 0; c < clips.size(); ++c) {
      std::vector<torch::Tensor> row{clips[c].second};
      for (std::size_t k = 1; k < frames[c].size(); ++k)
        row.push_back(media::framesToTensor(frames[c][k]));
      char name[32];
      std::snprintf(name, sizeof name, "clip_%03zu.gif", c);
      media::writeVideo((out / name).string(), media::tensorToFrames(torch::cat(row, 3), 8.0));
    }
#endif
#if TB_WITH_OPENCV
    // clip_<k>/original.png and clip_<k>/<name>.png: the exact 8-bit frames the metrics were
    // computed on, left to right, lossless (the GIFs are palette-quantised).
    for (std::size_t c = 0; c < clips.size(); ++c) {
      char name[32];
      std::snprintf(name, sizeof name, "clip_%03zu", c);
      const fs::path dir = out / name;
      fs::create_directories(dir);
      for (std::size_t k = 0; k < frames[c].size(); ++k) {
        const media::VideoFrames strip = frameStrip(frames[c][k]);
        media::writePng(
            (dir / ((k == 0 ? std::string("original") : entries[k - 1].name) + ".png")).string(),
            strip.width, strip.height, strip.rgb.data());
      }
    }
    // grid.png: a header row of names, then one row per clip.
    const int cell = std::max(128, frames[0][0].width);
    std::vector<cv::Mat> rows;
    for (std::size_t c = 0; c < clips.size(); ++c) {
      std::vector<cv::Mat> cells;
      cells.push_back(
          cellImage(frames[c][0], cell, {"original", clips[c].first.substr(0, 20), "", ""}));
      for (std::size_t k = 0; k < entries.size(); ++k) {
        const Scores& s = scores[c][k];
        cells.push_back(
            cellImage(frames[c][k + 1], cell,
                      {entries[k].name, "PSNR " + fixed(s.psnr, 2) + " dB",
                       "SSIM " + fixed(s.ssim, 3), lpips ? "LPIPS " + fixed(s.lpips, 4) : ""}));
      }
      cv::Mat row;
      cv::hconcat(cells, row);
      rows.push_back(row);
    }
    cv::Mat grid;
    cv::vconcat(rows, grid);
    media::writePng((out / "grid.png").string(), grid.cols, grid.rows, grid.data);
#endif
    Json line = {
        {"clips", clips.size()}, {"mean", core::toJson(report)["mean"]}, {"out", out.string()}};
    std::cout << line.dump() << std::endl;
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "tokenbench-trainer compare: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tokenbench-trainer compare: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tb::trainer::cli
