#include "trainer/cli/data_commands.h"

#include "core/data_info.h"
#include "trainer/cli/model_commands.h"
#include "trainer/data/clip_loader.h"
#include "trainer/media/frame_tensors.h"
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>

namespace tb::trainer::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kPreviewFrames = 8;

core::ShardSetInfo describeShards(const data::ClipShards& shards, bool verified) {
  const data::ShardSettings& s = shards.settings();
  core::ShardSetInfo info;
  info.data_type = s.data_type;
  info.image_size = s.image_size;
  info.num_frames = s.num_frames;
  info.frame_stride = s.frame_stride;
  info.count = static_cast<std::int64_t>(shards.shardCount());
  info.usable = static_cast<std::int64_t>(shards.usableShards());
  info.clips = static_cast<std::int64_t>(shards.clipCount());
  info.bytes = static_cast<std::int64_t>(shards.bytes());
  info.verified = verified;
  return info;
}

core::DataInfo describeIndex(const core::DataConfig& data, const data::ClipDataset& dataset,
                             bool verified) {
  core::DataInfo j;
  j.type = core::choiceName(data.type);
  j.path = data.path;
  j.valid_path = data.valid_path;
  const auto& index = dataset.index();
  j.files = data.type == core::DataType::Synthetic ? static_cast<std::int64_t>(data.synthetic_clips)
                                                   : static_cast<std::int64_t>(index.files.size());
  j.train_files = static_cast<std::int64_t>(dataset.trainSize());
  j.valid_files = static_cast<std::int64_t>(dataset.validSize());
  // Clips: the consecutive, non-overlapping clips `pack` cuts from each file (one per image or
  // procedural clip).
  const data::ShardSettings cut{core::choiceName(data.type), data.image_size, data.num_frames,
                                data.frame_stride};
  std::int64_t train_clips = dataset.trainSize(), valid_clips = dataset.validSize();
  std::int64_t min_frames = data.num_frames, max_frames = data.num_frames,
               total = static_cast<std::int64_t>(data.synthetic_clips) * data.num_frames;
  if (data.type != core::DataType::Synthetic) {
    train_clips = valid_clips = total = 0;
    min_frames = std::numeric_limits<std::int64_t>::max();
    max_frames = 0;
    // Which files are held out is the dataset's seeded split (or data.valid_path's files): count
    // clips over data.path's files and apportion them by the split.
    for (const auto& f : index.files) {
      min_frames = std::min<std::int64_t>(min_frames, f.frames);
      max_frames = std::max<std::int64_t>(max_frames, f.frames);
      total += f.frames;
    }
    std::int64_t clips = 0;
    for (const auto& f : index.files) {
      clips += std::max<std::int64_t>(
          1, static_cast<std::int64_t>(data::clipStarts(f.frames, cut).size()));
    }
    valid_clips = dataset.validSize();  // validation takes one clip per held-out file
    train_clips = data.valid_path.empty() ? std::max<std::int64_t>(0, clips - valid_clips) : clips;
  }
  if (const data::ClipShards* shards = dataset.shards()) {
    // Shards know their clips exactly: those of the training sources.
    train_clips = shards->clipCount();
    if (data.valid_path.empty()) {
      std::map<std::string, std::size_t> source_of;
      for (std::size_t s = 0; s < index.files.size(); ++s)
        source_of.emplace(index.files[s].path, s);
      for (std::int64_t i = 0; i < dataset.validSize(); ++i) {
        train_clips -=
            static_cast<std::int64_t>(shards->clips(source_of.at(dataset.validSource(i))).size());
      }
    }
  }
  j.train_clips = train_clips;
  j.valid_clips = valid_clips;
  j.min_frames = min_frames;
  j.max_frames = max_frames;
  j.total_frames = total;
  std::map<std::pair<int, int>, int> sizes;
  for (const auto& f : index.files) ++sizes[{f.width, f.height}];
  if (data.type == core::DataType::Synthetic)
    sizes[{data.image_size, data.image_size}] = data.synthetic_clips;
  for (const auto& [wh, n] : sizes) j.resolutions.push_back({wh.first, wh.second, n});
  for (const auto& s : dataset.indexSkips()) j.skipped.push_back({s.path, s.reason});
  if (const data::ClipShards* shards = dataset.shards())
    j.shards = describeShards(*shards, verified);
  if (const data::ClipShards* shards = dataset.shards(false); shards && !data.valid_path.empty()) {
    j.valid_shards = describeShards(*shards, verified);
  }
  return j;
}

}  // namespace

int dataInfo(const DataInfoArgs& args) {
  constexpr const char* kPrefix = "tokenbench-trainer data-info: ";
  core::RunConfig config;
  if (!loadConfigArgument(args.config, args.preset, config)) return 2;
  std::unique_ptr<data::ClipDataset> dataset;
  try {
    dataset = std::make_unique<data::ClipDataset>(
        config.data, static_cast<std::uint64_t>(config.train.seed), fs::path(),
        std::max(1, config.data.workers), args.verify);
  } catch (const UserError& e) {
    std::cerr << kPrefix << e.what() << (e.hint().empty() ? "" : " (" + e.hint() + ")") << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << kPrefix << e.what() << "\n";
    return 2;
  }
  core::DataInfo out = describeIndex(config.data, *dataset, args.verify);
  if (!args.preview.empty()) {
#if TB_WITH_OPENCV
    try {
      fs::create_directories(args.preview);
      const bool held_out = dataset->validSize() > 0;
      const std::int64_t available = held_out ? dataset->validSize() : dataset->trainSize();
      const std::int64_t n = std::min<std::int64_t>(args.preview_clips, available);
      for (std::int64_t k = 0; k < n; ++k) {
        const torch::Tensor clip = held_out ? dataset->validSample(k) : dataset->trainSample(k);
        const std::int64_t frames = std::min<std::int64_t>(clip.size(1), kPreviewFrames);
        // [3, T, H, W] -> [3, H, T * W]: frames left to right.
        const torch::Tensor strip = clip.slice(1, 0, frames)
                                        .permute({0, 2, 1, 3})
                                        .reshape({3, clip.size(2), frames * clip.size(3)});
        const media::VideoFrames image = media::tensorToFrames(strip);
        const fs::path png =
            fs::absolute(fs::path(args.preview) / ("preview_" + std::to_string(k) + ".png"));
        media::writePng(png.string(), image.width, image.height, image.rgb.data());
        const std::string source = held_out ? dataset->validSource(k) : dataset->trainSource(k);
        out.preview.push_back({source, png.string()});
      }
    } catch (const UserError& e) {
      std::cerr << kPrefix << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << kPrefix << "preview in " << args.preview << ": " << e.what() << "\n";
      return 1;
    }
#else
    std::cerr << kPrefix << "--preview needs a build with OpenCV (TB_WITH_OPENCV)\n";
    return 2;
#endif
  }
  std::cout << core::toJson(out).dump() << std::endl;
  return 0;
}

}  // namespace tb::trainer::cli
