// Clip shards: `pack` of real video and image folders (videos encoded here with FFmpeg), the
// pixels against what the decoder and validation give, seeded sampling, resume and ranks as with
// videos, damaged shards named and skipped, and training a tiny model from shards.

#include "core/config_io.h"
#include "core/metrics_log.h"
#include "core/safetensors.h"
#include "tests/trainer/test_support.h"
#include "trainer/cli/pack_command.h"
#include "trainer/data/clip_loader.h"
#include "trainer/data/clip_shards.h"
#include "trainer/media/frame_tensors.h"
#if TB_WITH_FFMPEG && TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#include "trainer/media/video_decoder.h"
#include "trainer/media/video_encoder.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <set>

namespace tb::trainer::data {
namespace {

namespace fs = std::filesystem;
using testing::makeClip;
using testing::TempFolder;
using Json = nlohmann::json;

std::string fileBytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeBytes(const fs::path& file, const std::string& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << bytes;
}

Json readManifest(const fs::path& folder) {
  return Json::parse(fileBytes(folder / "manifest.json"));
}

/// Runs `pack` on `data` (a config file written beside `out`); returns its exit code.
int pack(const core::DataConfig& data, const fs::path& out, double shard_mb = 256, int threads = 2,
         std::uint64_t seed = 0) {
  core::RunConfig config;
  config.data = data;
  config.train.seed = static_cast<std::int64_t>(seed);
  const fs::path file = out.string() + ".json";
  writeBytes(file, core::toJsonText(config));
  cli::PackArgs args;
  args.config = file.string();
  args.out = out.string();
  args.shard_mb = shard_mb;
  args.threads = threads;
  return cli::pack(args);
}

/// `data` reading the shard folder `folder` instead (same image_size, num_frames, stride).
core::DataConfig shardData(core::DataConfig data, const fs::path& folder) {
  data.type = core::DataType::Shards;
  data.path = folder.string();
  data.valid_path.clear();
  return data;
}

/// MiB holding exactly `clips` clips of `d`, for shards of that many clips.
double shardMb(const core::DataConfig& d, int clips) {
  const double clip = 3.0 * d.num_frames * d.image_size * d.image_size;
  return (clips + 0.5) * clip / (1024.0 * 1024.0);
}

TEST(ClipShardsFormat, Crc64IsTheXzCheckValueInOnePieceOrMany) {
  const char* check = "123456789";
  Crc64 whole;
  whole.update(check, 9);
  EXPECT_EQ(whole.value(), 0x995dc9bbdf1939faULL);
  Crc64 pieces;
  pieces.update(check, 4);
  pieces.update(check + 4, 5);
  EXPECT_EQ(pieces.value(), whole.value());
  EXPECT_EQ(Crc64::hex(whole.value()), "995dc9bbdf1939fa");
  EXPECT_EQ(Crc64().value(), 0u);
}

TEST(ClipShardsFormat, VideosCutIntoConsecutiveNonOverlappingClips) {
  const ShardSettings s{"videos", 16, 5, 2};  // a clip covers 9 frames, the next starts 10 later
  EXPECT_EQ(clipStarts(20, s), (std::vector<int>{0, 10}));
  EXPECT_EQ(clipStarts(19, s), (std::vector<int>{0, 10}));
  EXPECT_EQ(clipStarts(18, s), (std::vector<int>{0}));
  EXPECT_EQ(clipStarts(9, s), (std::vector<int>{0}));
  EXPECT_TRUE(clipStarts(8, s).empty());
  EXPECT_EQ(clipStarts(3, ShardSettings{"videos", 16, 1, 1}), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.clipBytes(), 5u * 16 * 16 * 3);
}

#if TB_WITH_FFMPEG && TB_WITH_OPENCV

// train/a.mkv (20 frames, 40x32: 2 clips), train/b.MP4 (24 frames, 32x48: 2 clips), train/c.mkv
// (9 frames: 1 clip), and two files pack skips: short.mkv (3 frames) and text.mp4 (not a video).
void makeVideoFolder(const fs::path& root) {
  fs::create_directories(root);
  media::writeVideo((root / "a.mkv").string(), makeClip(40, 32, 20, 10));
  media::writeVideo((root / "b.MP4").string(), makeClip(32, 48, 24, 12));
  media::writeVideo((root / "c.mkv").string(), makeClip(32, 32, 9, 8));
  media::writeVideo((root / "short.mkv").string(), makeClip(32, 32, 3, 8));
  writeBytes(root / "text.mp4", "this is not a video\n");
}

core::DataConfig videoData(const fs::path& root) {
  core::DataConfig d;
  d.type = core::DataType::Videos;
  d.path = root.string();
  d.image_size = 16;
  d.num_frames = 5;
  d.frame_stride = 2;
  d.valid_fraction = 0;
  d.workers = 0;
  return d;
}

/// A video folder and its shards (3 clips per shard: two shards), shared by the tests below.
struct Packed {
  TempFolder dir;
  fs::path videos = dir.path() / "videos";
  fs::path shards = dir.path() / "shards";
  core::DataConfig data;
  explicit Packed(int clips_per_shard = 3) {
    makeVideoFolder(videos);
    data = videoData(videos);
    EXPECT_EQ(pack(data, shards, shardMb(data, clips_per_shard)), 0);
  }
};

TEST(ClipShardsPack, VideoFolderGivesEveryClipWithTheDecodersPixels) {
  Packed p;
  const Json m = readManifest(p.shards);
  EXPECT_EQ(m["format"], "tokenbench-clip-shards");
  EXPECT_EQ(
      m["settings"],
      (Json{{"data_type", "videos"}, {"image_size", 16}, {"num_frames", 5}, {"frame_stride", 2}}));
  EXPECT_EQ(m["totals"]["clips"], 5);
  EXPECT_EQ(m["totals"]["sources"], 3);
  EXPECT_EQ(m["totals"]["frames"], 25);
  ASSERT_EQ(m["shards"].size(), 2u);
  EXPECT_EQ(m["shards"][0]["clips"], 3);
  EXPECT_EQ(m["shards"][1]["clips"], 2);
  std::set<std::string> skipped;
  for (const auto& s : m["skipped"]) skipped.insert(s["path"].get<std::string>());
  EXPECT_EQ(skipped, (std::set<std::string>{"short.mkv", "text.mp4"}));
  // Only the shards and the manifest: no temporary file is left behind.
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(p.shards)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"manifest.json", "shard_00000.safetensors",
                                          "shard_00001.safetensors"}));

  Crc64 content;
  int compared = 0;
  for (const auto& entry : m["shards"]) {
    const fs::path file = p.shards / entry["file"].get<std::string>();
    const std::string bytes = fileBytes(file);
    Crc64 crc;
    crc.update(bytes.data(), bytes.size());
    content.update(bytes.data(), bytes.size());
    EXPECT_EQ(entry["crc64"], Crc64::hex(crc.value()));
    EXPECT_EQ(entry["bytes"], bytes.size());
    const auto shard = core::SafetensorsFile::read(file);
    const core::TensorInfo* clips = shard.find("clips");
    ASSERT_NE(clips, nullptr);
    EXPECT_EQ(clips->dtype, core::DType::U8);
    const Json list = Json::parse(shard.metadata().at("clips"));
    ASSERT_EQ(clips->shape,
              (std::vector<std::int64_t>{entry["clips"].get<std::int64_t>(), 5, 16, 16, 3}));
    for (std::size_t row = 0; row < list.size(); ++row) {
      // Each clip is exactly what the decoder gives for that window, centre crop.
      media::ClipRequest request;
      request.start = list[row]["frame_start"].get<int>();
      request.count = 5;
      request.stride = 2;
      request.resizeShortSide = 16;
      request.cropSize = 16;
      EXPECT_EQ(list[row]["frame_stride"], 2);
      EXPECT_EQ(list[row]["frame_count"], 5);
      const media::VideoFrames want =
          media::VideoDecoder((p.videos / list[row]["source"].get<std::string>()).string())
              .decode(request);
      const std::string_view got =
          shard.data(*clips).substr(row * want.rgb.size(), want.rgb.size());
      EXPECT_EQ(std::memcmp(got.data(), want.rgb.data(), want.rgb.size()), 0) << list[row].dump();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 5);
  EXPECT_EQ(m["content_hash"], "crc64:" + Crc64::hex(content.value()));

  // A folder that already holds something is refused: pack never mixes two packs.
  EXPECT_EQ(pack(p.data, p.shards), 2);
  EXPECT_EQ(readManifest(p.shards), m);
}

// The same items, split and validation clips as the video folder: for 9-frame files (one clip,
// no room to move) validation from shards is bit-identical to validation from the videos.
TEST(ClipShardsData, SplitSourcesAndValidationPixelsMatchTheVideoFolder) {
  Packed p;
  const fs::path held = p.dir.path() / "held";
  fs::create_directories(held / "sub");
  media::writeVideo((held / "x.mkv").string(), makeClip(24, 24, 9, 5));
  media::writeVideo((held / "sub/y.mkv").string(), makeClip(40, 24, 9, 5));
  const fs::path held_shards = p.dir.path() / "held_shards";
  ASSERT_EQ(pack(videoData(held), held_shards), 0);

  core::DataConfig from_videos = p.data, from_shards = shardData(p.data, p.shards);
  from_videos.valid_path = held.string();
  from_shards.valid_path = held_shards.string();
  ClipDataset videos(from_videos, 7), shards(from_shards, 7);
  ASSERT_EQ(shards.trainSize(), 3);
  ASSERT_EQ(shards.validSize(), 2);
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(shards.validSource(i), videos.validSource(i));
    EXPECT_TRUE(torch::equal(shards.validSample(i), videos.validSample(i)))
        << shards.validSource(i);
  }
  for (std::int64_t position = 0; position < 9; ++position) {
    EXPECT_EQ(shards.trainSource(position), videos.trainSource(position)) << position;
  }
  // Without data.valid_path both hold out the same files (the seeded split over sources).
  from_videos.valid_path.clear();
  from_shards.valid_path.clear();
  from_videos.valid_fraction = from_shards.valid_fraction = 0.34;
  ClipDataset split_videos(from_videos, 9), split_shards(from_shards, 9);
  ASSERT_EQ(split_shards.validSize(), 1);
  EXPECT_EQ(split_shards.validSource(0), split_videos.validSource(0));
  EXPECT_NE(shards.describe().find("3 files, 5 clips in 2 shards"), std::string::npos)
      << shards.describe();
}

TEST(ClipShardsData, TrainingCropsAndFramesAreWindowsOfTheStoredClips) {
  Packed p;
  core::DataConfig d = shardData(p.data, p.shards);
  ClipDataset whole(d, 3);
  d.train_crop = d.image_size / 2;
  d.train_frames = d.num_frames - 2;
  ClipDataset cropped(d, 3);
  // A window of the clip the same position draws without cropping: the stored pixels (mirrored
  // with it when data.hflip flips it), not a resampling of them.
  const auto isWindowOf = [&](const torch::Tensor& part, const torch::Tensor& clip) {
    for (std::int64_t t = 0; t + part.size(1) <= clip.size(1); ++t)
      for (std::int64_t y = 0; y + part.size(2) <= clip.size(2); ++y)
        for (std::int64_t x = 0; x + part.size(3) <= clip.size(3); ++x)
          if (torch::equal(part, clip.slice(1, t, t + part.size(1))
                                     .slice(2, y, y + part.size(2))
                                     .slice(3, x, x + part.size(3))))
            return true;
    return false;
  };
  for (std::int64_t position = 0; position < 6; ++position) {
    const torch::Tensor clip = cropped.trainSample(position);
    ASSERT_EQ(clip.sizes(),
              (std::vector<std::int64_t>{3, d.train_frames, d.train_crop, d.train_crop}))
        << position;
    EXPECT_TRUE(isWindowOf(clip, whole.trainSample(position))) << position;
  }
  // Validation keeps the whole clips.
  EXPECT_EQ(cropped.validSize(), whole.validSize());
  if (cropped.validSize() > 0) {
    EXPECT_EQ(cropped.validSample(0).sizes(),
              (std::vector<std::int64_t>{3, d.num_frames, d.image_size, d.image_size}));
  }
}

TEST(ClipShardsData, SamplesAreSeededClipsOfTheirSourceAndRanksReadDisjointBatches) {
  Packed p;
  const core::DataConfig d = shardData(p.data, p.shards);
  ClipDataset a(d, 3), b(d, 3);
  const ClipShards& shards = *a.shards();
  std::set<std::string> distinct;
  for (std::int64_t position = 0; position < 12; ++position) {
    const torch::Tensor x = a.trainSample(position);
    ASSERT_EQ(x.sizes(), (std::vector<std::int64_t>{3, 5, 16, 16}));
    EXPECT_TRUE(torch::equal(x, b.trainSample(position))) << position;
    distinct.insert(std::to_string(x.sum().item<double>()));
    // One of its source's clips, as stored or flipped.
    const auto& files = a.index().files;
    const auto source = static_cast<std::size_t>(
        std::find_if(files.begin(), files.end(),
                     [&](const IndexedFile& f) { return f.path == a.trainSource(position); }) -
        files.begin());
    bool found = false;
    for (std::size_t k = 0; k < shards.clips(source).size(); ++k) {
      const torch::Tensor clip = media::framesToTensor(shards.pixels(source, k), 5, 16, 16);
      found |= torch::equal(x, clip) || torch::equal(x, clip.flip({3}));
    }
    EXPECT_TRUE(found) << "position " << position;
  }
  EXPECT_GE(distinct.size(), 5u) << "the clip and the flip are drawn per position";
  ClipDataset other_seed(d, 4);
  bool any_differs = false;
  for (std::int64_t position = 0; position < 6; ++position) {
    any_differs |= !torch::equal(a.trainSample(position), other_seed.trainSample(position));
  }
  EXPECT_TRUE(any_differs);

  // The loader over shards: threads, a restart (resume) and two ranks see the same positions.
  ClipLoader serial(a, 2, 0, 1);
  ClipLoader threaded(a, 2, 2, 3);
  std::vector<torch::Tensor> batches;
  for (int k = 0; k < 6; ++k) {
    batches.push_back(serial.next().clips);
    EXPECT_TRUE(torch::equal(threaded.next().clips, batches.back())) << "batch " << k;
  }
  threaded.restart(4);
  EXPECT_TRUE(torch::equal(threaded.next().clips, batches[4]));
  ClipLoader rank0(b, 2, 1, 2, 0, 2), rank1(b, 2, 1, 2, 1, 2);
  for (int k = 0; k < 2; ++k) {
    const torch::Tensor r0 = rank0.next().clips, r1 = rank1.next().clips;
    EXPECT_TRUE(torch::equal(r0, batches[2 * k]));
    EXPECT_TRUE(torch::equal(r1, batches[2 * k + 1]));
    EXPECT_FALSE(torch::equal(r0, r1));
  }
}

std::string reasonFor(const std::vector<SkippedFile>& skipped, const std::string& path) {
  for (const auto& s : skipped) {
    if (s.path == path) return s.reason;
  }
  return "(not skipped)";
}

std::string errorOf(const core::DataConfig& d, bool verify = false) {
  try {
    ClipDataset data(d, 1, {}, 1, verify);
  } catch (const DataError& e) {
    return e.code() + ": " + e.what();
  }
  return "no error";
}

TEST(ClipShardsData, DamagedShardsAreNamedAndSkipped) {
  Packed p(1);  // one clip per shard: a@0, a@10, b@0, b@10, c@0
  ASSERT_EQ(readManifest(p.shards)["shards"].size(), 5u);
  const fs::path cut = p.shards / "shard_00001.safetensors",
                 header = p.shards / "shard_00003.safetensors",
                 pixel = p.shards / "shard_00004.safetensors";
  const std::string whole = fileBytes(cut);
  fs::resize_file(cut, whole.size() / 2);
  std::string bytes = fileBytes(header);
  bytes.replace(8, 12, "{{garbage!!\"");
  writeBytes(header, bytes);
  bytes = fileBytes(pixel);
  bytes[bytes.size() - 7] ^= 0x55;  // a pixel: only the content hash sees it
  writeBytes(pixel, bytes);

  const core::DataConfig d = shardData(p.data, p.shards);
  ClipDataset data(d, 1);
  ASSERT_EQ(data.indexSkips().size(), 2u);
  EXPECT_EQ(reasonFor(data.indexSkips(), "shard_00001.safetensors"),
            "truncated: " + std::to_string(whole.size() / 2) + " bytes, the manifest says " +
                std::to_string(whole.size()));
  EXPECT_EQ(reasonFor(data.indexSkips(), "shard_00003.safetensors").rfind("damaged header: ", 0),
            0u);
  EXPECT_EQ(data.trainSize(), 3);  // every source keeps a clip
  EXPECT_EQ(data.shards()->clipCount(), 3);
  for (std::int64_t position = 0; position < 6; ++position)
    EXPECT_EQ(data.trainSample(position).size(1), 5);

  // Verifying the content hashes finds the changed pixel too; c.mkv had no other clip.
  ClipDataset verified(d, 1, {}, 1, true);
  EXPECT_EQ(
      reasonFor(verified.indexSkips(), "shard_00004.safetensors").rfind("content hash crc64 ", 0),
      0u);
  EXPECT_EQ(verified.trainSize(), 2);

  // Other clip settings, nothing usable, no manifest: errors naming the key and the folder.
  core::DataConfig resized = d;
  resized.image_size = 32;
  EXPECT_EQ(errorOf(resized),
            "data_config_invalid: data.image_size is 32 but the shards in data.path \"" +
                p.shards.string() + "\" were packed with 16");
  for (const char* name :
       {"shard_00000.safetensors", "shard_00002.safetensors", "shard_00004.safetensors"}) {
    writeBytes(p.shards / name, "x");
  }
  EXPECT_EQ(
      errorOf(d).rfind(
          "dataset_empty: data.path \"" + p.shards.string() + "\": all 5 shards are unusable", 0),
      0u)
      << errorOf(d);
  fs::remove(p.shards / "manifest.json");
  EXPECT_EQ(
      errorOf(d).rfind(
          "data_path_missing: data.path \"" + p.shards.string() + "\" has no manifest.json", 0),
      0u)
      << errorOf(d);
  writeBytes(p.shards / "manifest.json",
             "{\"format\": \"tokenbench-clip-shards\", \"version\": 2}");
  EXPECT_NE(errorOf(d).find("manifest.json: version 2, this build reads version 1"),
            std::string::npos)
      << errorOf(d);
}

TEST(ClipShardsPack, ImagesPackAsOneFrameClipsOfTheValidationPixels) {
  TempFolder dir;
  const fs::path root = dir.path() / "images";
  for (auto [name, w, h] : {std::tuple{"a.png", 40, 20}, {"nested/b.png", 20, 30}}) {
    fs::create_directories((root / name).parent_path());
    const media::VideoFrames f = makeClip(w, h, 1, 0);
    media::writePng((root / name).string(), w, h, f.rgb.data());
  }
  writeBytes(root / "broken.jpg", "not a jpeg");
  core::DataConfig d;
  d.type = core::DataType::Images;
  d.path = root.string();
  d.image_size = 12;
  d.num_frames = 1;
  d.valid_fraction = 0.5;
  ASSERT_EQ(pack(d, dir.path() / "shards"), 0);
  const Json m = readManifest(dir.path() / "shards");
  EXPECT_EQ(m["totals"]["clips"], 2);
  EXPECT_EQ(m["skipped"][0]["path"], "broken.jpg");
  ClipDataset images(d, 2), shards(shardData(d, dir.path() / "shards"), 2);
  ASSERT_EQ(shards.validSize(), 1);
  EXPECT_EQ(shards.validSource(0), images.validSource(0));
  // Bicubic resizing gives values between the 8-bit levels: shards hold them rounded.
  const torch::Tensor want = images.validSample(0), got = shards.validSample(0);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_LE((got - want).abs().max().item<float>(), 0.5f / 127.5f + 1e-6f);
}

#endif  // TB_WITH_FFMPEG && TB_WITH_OPENCV

// Procedural clips pack too, without FFmpeg: a tiny model learns from their shards, and a run
// stopped and resumed from shards ends bit-identical to one that was not.
/// testing::tinyConfig() reading the shard folder `shards` (packed from its procedural clips).
core::RunConfig tinyShardRun(const fs::path& shards) {
  core::RunConfig c = testing::tinyConfig();
  c.data = shardData(c.data, shards);
  c.data.workers = 1;
  return c;
}

std::vector<double> reconLosses(const fs::path& run) {
  std::vector<double> losses;
  std::ifstream in(run / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto row = core::parseMetricsLine(line);
    if (row && !row->values.empty() && row->values.front().first == "train/recon_loss") {
      losses.push_back(row->values.front().second);
    }
  }
  return losses;
}

TEST(ClipShardsTraining, TinyModelLearnsFromShardsAndResumesBitIdentically) {
  TempFolder dir;
  const core::DataConfig procedural = testing::tinyConfig().data;  // 64 clips
  ASSERT_EQ(pack(procedural, dir.path() / "shards", shardMb(procedural, 32)), 0);
  EXPECT_EQ(readManifest(dir.path() / "shards")["shards"].size(), 2u);

  core::RunConfig config = tinyShardRun(dir.path() / "shards");
  config.train.max_steps = 60;
  const testing::RunResult learned = testing::train(config, dir.path() / "learn");
  ASSERT_EQ(learned.code, 0);
  const std::vector<double> losses = reconLosses(dir.path() / "learn");
  ASSERT_EQ(losses.size(), 60u);
  double first = 0, last = 0;
  for (std::size_t i = 0; i < 5; ++i) first += losses[i] / 5;
  for (std::size_t i = 0; i < 10; ++i) last += losses[losses.size() - 1 - i] / 10;
  // The mean L1 loss of the last 10 of 60 steps is below 80% of the first 5 (measured here:
  // 0.51 -> 0.36, 71%).
  EXPECT_LT(last, 0.8 * first) << "first " << first << " last " << last;
  EXPECT_TRUE(fs::exists(dir.path() / "learn/checkpoints/step_60/COMPLETE"));

  config.train.max_steps = 8;
  config.train.checkpoint_every = 4;
  ASSERT_EQ(testing::train(config, dir.path() / "straight").code, 0);
  core::RunConfig half = config;
  half.train.max_steps = 4;
  ASSERT_EQ(testing::train(half, dir.path() / "split").code, 0);
  ASSERT_EQ(testing::train(config, dir.path() / "split", /*resume=*/true).code, 0);
  const std::string a = fileBytes(dir.path() / "straight/checkpoints/step_8/model.safetensors");
  ASSERT_FALSE(a.empty());
  EXPECT_TRUE(a == fileBytes(dir.path() / "split/checkpoints/step_8/model.safetensors"))
      << "weights differ";
  EXPECT_EQ(reconLosses(dir.path() / "straight"), reconLosses(dir.path() / "split"));
}

}  // namespace
}  // namespace tb::trainer::data
