// The data layer: folder index and its cache, the seeded split, deterministic samples,
// skipping of damaged files, the prefetching loader, and training on a real video folder.

#include "core/metrics_log.h"
#include "core/run_directory.h"
#include "tests/trainer/test_support.h"
#include "trainer/data/clip_loader.h"
#include "trainer/data/dataset_index.h"
#include "trainer/media/image_reader.h"
#include "trainer/media/video_decoder.h"
#include "trainer/media/video_encoder.h"
#include "trainer/training/training_run.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

namespace tb::trainer::data {
namespace {

namespace fs = std::filesystem;
using testing::makeClip;
using testing::TempFolder;

void writeText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

// good/a.mkv (20 frames, 40x32), good/b.MP4 (24 frames, 32x48), c.mkv (12 frames), and the
// broken: short.mkv (3 frames), empty.mp4 (0 bytes), text.mp4 (not a video), cut.mp4 (half a file).
void makeVideoFolder(const fs::path& root) {
  fs::create_directories(root / "good");
  media::writeVideo((root / "good/a.mkv").string(), makeClip(40, 32, 20, 10));
  media::writeVideo((root / "good/b.MP4").string(), makeClip(32, 48, 24, 12));
  media::writeVideo((root / "c.mkv").string(), makeClip(32, 32, 12, 8));
  media::writeVideo((root / "short.mkv").string(), makeClip(32, 32, 3, 8));
  writeText(root / "empty.mp4", "");
  writeText(root / "text.mp4", "this is not a video\n");
  writeText(root / "notes.txt", "ignored: not a media extension\n");
  const std::string full = (root / "full.mp4").string();
  media::writeVideo(full, makeClip(32, 32, 16, 8));
  std::ifstream in(full, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  writeText(root / "cut.mp4", bytes.substr(0, bytes.size() / 2));
  fs::remove(full);
}

core::DataConfig videoData(const fs::path& root) {
  core::DataConfig d;
  d.type = core::DataType::Videos;
  d.path = root.string();
  d.image_size = 16;
  d.num_frames = 5;
  d.frame_stride = 2;  // a clip spans 9 frames
  d.valid_fraction = 0.34;
  d.workers = 0;
  return d;
}

std::string reasonFor(const std::vector<SkippedFile>& skipped, const std::string& path) {
  for (const auto& s : skipped) {
    if (s.path == path) return s.reason;
  }
  return "(not skipped)";
}

TEST(DataIndex, ProbesGoodFilesAndNamesWhyTheOthersAreSkipped) {
  TempFolder dir;
  makeVideoFolder(dir.path() / "videos");
  IndexOptions options;
  options.min_frames = 9;
  options.threads = 2;
  const DatasetIndex index = buildDatasetIndex(dir.path() / "videos", options);
  ASSERT_EQ(index.files.size(), 3u);
  EXPECT_EQ(index.files[0].path, "c.mkv");
  EXPECT_EQ(index.files[1].path, "good/a.mkv");
  EXPECT_EQ(index.files[1].frames, 20);
  EXPECT_EQ(index.files[1].width, 40);
  EXPECT_EQ(index.files[1].height, 32);
  EXPECT_NEAR(index.files[1].fps, 10.0, 1e-6);
  EXPECT_EQ(index.files[2].path, "good/b.MP4");
  EXPECT_EQ(index.files[2].frames, 24);
  ASSERT_EQ(index.skipped.size(), 4u);
  EXPECT_NE(reasonFor(index.skipped, "short.mkv").find("too short: 3 frames, a clip needs 9"),
            std::string::npos);
  for (const char* broken : {"empty.mp4", "text.mp4", "cut.mp4"}) {
    const std::string reason = reasonFor(index.skipped, broken);
    EXPECT_NE(reason, "(not skipped)") << broken;
    EXPECT_FALSE(reason.empty()) << broken;
  }
}

TEST(DataIndex, CacheIsReusedForUnchangedFilesAndRefreshedForChangedOnes) {
  TempFolder dir;
  const fs::path root = dir.path() / "videos";
  makeVideoFolder(root);
  IndexOptions options;
  options.min_frames = 9;
  options.cache_file = dir.path() / "run/data_index.json";
  const DatasetIndex first = buildDatasetIndex(root, options);
  EXPECT_EQ(first.probed, 7);
  EXPECT_EQ(first.reused, 0);
  ASSERT_TRUE(fs::exists(options.cache_file));

  const DatasetIndex second = buildDatasetIndex(root, options);
  EXPECT_EQ(second.probed, 0);
  EXPECT_EQ(second.reused, 7);
  ASSERT_EQ(second.files.size(), first.files.size());
  for (std::size_t i = 0; i < first.files.size(); ++i) {
    EXPECT_EQ(second.files[i].path, first.files[i].path);
    EXPECT_EQ(second.files[i].frames, first.files[i].frames);
  }
  EXPECT_EQ(second.skipped.size(), first.skipped.size());

  // A repaired file is probed again and becomes usable; the others stay cached.
  media::writeVideo((root / "text.mp4").string(), makeClip(32, 32, 10, 8));
  const DatasetIndex third = buildDatasetIndex(root, options);
  EXPECT_EQ(third.probed, 1);
  EXPECT_EQ(third.reused, 6);
  EXPECT_EQ(third.files.size(), 4u);

  // A damaged cache file is ignored, not an error.
  writeText(options.cache_file, "{ not json");
  EXPECT_EQ(buildDatasetIndex(root, options).probed, 7);
}

TEST(DataSplit, IsSeededDisjointAndCoversEveryFile) {
  const auto [train, valid] = splitFiles(50, 0.2, 7);
  EXPECT_EQ(valid.size(), 10u);
  EXPECT_EQ(train.size(), 40u);
  std::set<std::int64_t> all(train.begin(), train.end());
  all.insert(valid.begin(), valid.end());
  EXPECT_EQ(all.size(), 50u);
  EXPECT_EQ(splitFiles(50, 0.2, 7), splitFiles(50, 0.2, 7));
  EXPECT_NE(splitFiles(50, 0.2, 7).second, splitFiles(50, 0.2, 8).second);
  // Tiny folders keep one training file; one file has no validation split.
  EXPECT_EQ(splitFiles(2, 0.9, 1).first.size(), 1u);
  EXPECT_EQ(splitFiles(1, 0.5, 1).second.size(), 0u);
}

TEST(DataVideos, SamplesAreDeterministicShapedAndVaried) {
  TempFolder dir;
  makeVideoFolder(dir.path() / "videos");
  const core::DataConfig d = videoData(dir.path() / "videos");
  ClipDataset a(d, 3), b(d, 3);
  EXPECT_EQ(a.trainSize() + a.validSize(), 3);
  EXPECT_EQ(a.validSize(), 1);
  EXPECT_EQ(a.indexSkips().size(), 4u);
  EXPECT_EQ(a.skippedCount(), 4);
  std::set<std::string> distinct;
  for (std::int64_t position = 0; position < 8; ++position) {
    const torch::Tensor x = a.trainSample(position);
    ASSERT_EQ(x.sizes(), (std::vector<std::int64_t>{3, 5, 16, 16}));
    EXPECT_LE(x.max().item<float>(), 1.0f);
    EXPECT_GE(x.min().item<float>(), -1.0f);
    EXPECT_TRUE(torch::equal(x, b.trainSample(position))) << "position " << position;
    distinct.insert(std::to_string(x.sum().item<double>()));
  }
  EXPECT_GE(distinct.size(), 6u)
      << "random starts, crops and flips should make most samples differ";
  EXPECT_TRUE(torch::equal(a.validSample(0), b.validSample(0)));
  // Another seed draws other clips.
  ClipDataset c(d, 4);
  bool any_differs = false;
  for (std::int64_t position = 0; position < 4; ++position) {
    any_differs |= !torch::equal(a.trainSample(position), c.trainSample(position));
  }
  EXPECT_TRUE(any_differs);
}

TEST(DataVideos, FileThatBreaksAfterIndexingIsSkippedNamedAndReplaced) {
  TempFolder dir;
  const fs::path root = dir.path() / "videos";
  makeVideoFolder(root);
  core::DataConfig d = videoData(root);
  d.valid_fraction = 0;
  ClipDataset data(d, 1);
  ASSERT_EQ(data.trainSize(), 3);
  writeText(root / "good/a.mkv", "overwritten after indexing");
  for (std::int64_t position = 0; position < 6; ++position) {
    EXPECT_EQ(data.trainSample(position).size(0), 3);  // every position still gets a clip
  }
  const auto skips = data.takeNewSkips();
  ASSERT_EQ(skips.size(), 1u);
  EXPECT_EQ(skips[0].path, "good/a.mkv");
  EXPECT_FALSE(skips[0].reason.empty());
  EXPECT_TRUE(data.takeNewSkips().empty());
  EXPECT_EQ(data.skippedCount(), 5);

  // When every file breaks, a clear error instead of an endless search.
  writeText(root / "good/b.MP4", "x");
  writeText(root / "c.mkv", "x");
  try {
    data.trainSample(99);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), "dataset_empty");
    EXPECT_NE(std::string(e.what()).find(root.string()), std::string::npos) << e.what();
    // The run ends before any warning could name them: the error does.
    for (const char* name : {"good/a.mkv: ", "good/b.MP4: ", "c.mkv: "}) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

// Real footage from Debian's opencv-doc package; the tests that read it skip without it.
const fs::path kOpencvData = "/usr/share/doc/opencv-doc/examples/data";

// The first `fraction` of `from`'s bytes, as a file cut short by a full disk or a killed copy.
void writeCut(const fs::path& from, const fs::path& to, double fraction) {
  std::ifstream in(from, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  writeText(
      to, bytes.substr(0, static_cast<std::size_t>(static_cast<double>(bytes.size()) * fraction)));
}

// tree.avi (Cinepak) holds 68 frames whose timestamps run to frame 444 of its header: it was
// indexed as 444 frames, and every clip past the 68th failed ("truncated: got 0 of 5 frames").
TEST(DataRealVideos, AnAviWithDroppedFramesIsReadAtItsRealFrameCount) {
  const fs::path tree = kOpencvData / "tree.avi";
  if (!fs::exists(tree)) GTEST_SKIP() << tree << " is absent (Debian package opencv-doc)";
  const media::VideoInfo info = media::probeVideo(tree.string());
  EXPECT_EQ(info.frameCount, 68);
  EXPECT_TRUE(info.warning.empty()) << info.warning;
  media::VideoDecoder decoder(tree.string());
  media::ClipRequest late;
  late.start = 60;
  late.count = 8;
  EXPECT_EQ(decoder.decode(late).count, 8);

  TempFolder dir;
  fs::create_directories(dir.path() / "videos");
  fs::copy_file(tree, dir.path() / "videos" / "tree.avi");
  core::DataConfig d = videoData(dir.path() / "videos");
  d.valid_fraction = 0;
  ClipDataset data(d, 1);
  ASSERT_EQ(data.trainSize(), 1);
  for (std::int64_t position = 0; position < 8; ++position) {
    EXPECT_EQ(data.trainSample(position).sizes(), (torch::IntArrayRef{3, 5, 16, 16}));
  }
  EXPECT_TRUE(data.takeNewSkips().empty());
}

// Cut copies of real files opened and promised every frame of their header: data-info listed
// them as fine and training failed without naming them. Indexing skips them, saying why.
TEST(DataRealVideos, CutCopiesOfRealVideosAreSkippedAsTruncatedWhenIndexed) {
  const fs::path megamind = kOpencvData / "Megamind.avi";
  const fs::path box_gz = "/usr/share/doc/opencv-doc/opencv4/html/box.mp4.gz";
  if (!fs::exists(megamind) || !fs::exists(box_gz))
    GTEST_SKIP() << "opencv-doc's footage is absent";
  TempFolder dir;
  const fs::path root = dir.path() / "videos";
  fs::create_directories(root);
  const fs::path box = dir.path() / "box.mp4";
  ASSERT_EQ(std::system(("gzip -dc '" + box_gz.string() + "' > '" + box.string() + "'").c_str()),
            0);
  fs::copy_file(megamind, root / "whole.avi");
  fs::copy_file(box, root / "whole.mp4");
  for (const double fraction : {0.3, 0.6}) {
    const std::string percent = std::to_string(static_cast<int>(fraction * 100));
    writeCut(megamind, root / ("megamind_" + percent + ".avi"), fraction);
    writeCut(box, root / ("box_" + percent + ".mp4"), fraction);
  }
  IndexOptions options;
  options.min_frames = 5;
  const DatasetIndex index = buildDatasetIndex(root, options);
  ASSERT_EQ(index.files.size(), 2u);
  EXPECT_EQ(index.files[0].path, "whole.avi");
  EXPECT_EQ(index.files[0].frames, 270);
  EXPECT_EQ(index.files[1].path, "whole.mp4");
  EXPECT_EQ(index.files[1].frames, 456);
  ASSERT_EQ(index.skipped.size(), 4u);
  for (const auto& skipped : index.skipped) {
    EXPECT_EQ(skipped.reason.rfind("truncated: got ", 0), 0u)
        << skipped.path << ": " << skipped.reason;
  }
}

TEST(DataVideos, UnusableFoldersAndConfigsAreClearErrors) {
  TempFolder dir;
  auto codeOf = [](const core::DataConfig& d) -> std::string {
    try {
      ClipDataset data(d, 1);
    } catch (const DataError& e) {
      return e.code() + ": " + e.what();
    }
    return "no error";
  };
  core::DataConfig d = videoData(dir.path() / "missing");
  EXPECT_EQ(codeOf(d).rfind("data_path_missing: data.path \"" + d.path + "\"", 0), 0u) << codeOf(d);
  fs::create_directories(dir.path() / "empty");
  writeText(dir.path() / "empty/text.mp4", "not a video");
  d.path = (dir.path() / "empty").string();
  EXPECT_NE(codeOf(d).find("dataset_empty"), std::string::npos) << codeOf(d);
  EXPECT_NE(codeOf(d).find("text.mp4"), std::string::npos) << codeOf(d);
  d.path.clear();
  EXPECT_NE(codeOf(d).find("data_config_invalid: data.path is empty"), std::string::npos)
      << codeOf(d);
  d.type = core::DataType::Images;
  d.path = dir.path().string();
  EXPECT_NE(codeOf(d).find("data.num_frames is 5"), std::string::npos) << codeOf(d);

  // A folder of images read as videos: named as such, with the key to set ("no videos files
  // found" before, and no hint).
  fs::create_directories(dir.path() / "pictures");
  writeText(dir.path() / "pictures/a.png", "x");
  writeText(dir.path() / "pictures/b.jpg", "x");
  d = videoData(dir.path() / "pictures");
  try {
    ClipDataset data(d, 1);
    ADD_FAILURE() << "a folder of images opened as videos";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no video files found, but 2 image files"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.hint(), "set data.type to images");
  }
}

// Validation scores train.valid_clips clips spread over the held-out files in name order, so that
// clips cut from several videos (bench/learning.sh's held-out folder) all count, not only the
// first video's.
TEST(DataVideos, ValidationPicksAreSpreadOverTheHeldOutFiles) {
  TempFolder dir;
  const fs::path train = dir.path() / "train", held = dir.path() / "held";
  makeVideoFolder(train);
  fs::create_directories(held);
  for (int i = 0; i < 6; ++i) {
    media::writeVideo((held / ("clip" + std::to_string(i) + ".mkv")).string(),
                      makeClip(16, 16, 9, 8));  // one 9-frame clip each
  }
  core::DataConfig d = videoData(train);
  d.valid_path = held.string();
  ClipDataset data(d, 1);
  ASSERT_EQ(data.validSize(), 6);
  EXPECT_EQ(data.validPicks(3), (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(data.validPicks(4), (std::vector<std::int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(data.validPicks(1), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(data.validPicks(6), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(data.validPicks(9), data.validPicks(6));  // never a file twice
  std::vector<std::string> names;
  for (const std::int64_t i : data.validPicks(3)) names.push_back(data.validSource(i));
  EXPECT_EQ(names, (std::vector<std::string>{"clip0.mkv", "clip2.mkv", "clip4.mkv"}));
}

// data.valid_path: validation reads a folder of its own (other sources), every data.path file
// trains, and a missing or unusable validation folder is an error naming data.valid_path.
TEST(DataVideos, ValidationFolderOfItsOwn) {
  TempFolder dir;
  const fs::path train = dir.path() / "train", held = dir.path() / "held";
  makeVideoFolder(train);
  fs::create_directories(held / "sub");
  media::writeVideo((held / "sub/other.mkv").string(), makeClip(24, 24, 9, 3));
  media::writeVideo((held / "second.mkv").string(), makeClip(24, 24, 11, 5));
  core::DataConfig d = videoData(train);
  d.valid_path = held.string();
  ClipDataset data(d, 1);
  EXPECT_EQ(data.trainSize(), 3);  // valid_fraction is not applied
  ASSERT_EQ(data.validSize(), 2);
  std::set<std::string> sources{data.validSource(0), data.validSource(1)};
  EXPECT_EQ(sources, (std::set<std::string>{"second.mkv", "sub/other.mkv"}));
  for (std::int64_t i = 0; i < 2; ++i) {
    ASSERT_EQ(data.validSample(i).sizes(), (std::vector<std::int64_t>{3, 5, 16, 16}));
  }
  // A 9-frame file holds exactly one clip of 5 frames at stride 2: the validation clip is that
  // file's frames 0, 2, 4, 6, 8, whatever the training files are.
  const torch::Tensor other =
      data.validSource(0) == "sub/other.mkv" ? data.validSample(0) : data.validSample(1);
  d.path = (held / "sub").string();
  d.valid_path.clear();
  d.valid_fraction = 0;
  d.clip_start = core::ClipStart::First;
  d.crop = core::CropMode::Center;
  d.hflip = false;
  EXPECT_TRUE(torch::equal(other, ClipDataset(d, 1).trainSample(0)));

  d = videoData(train);
  d.valid_path = (dir.path() / "nowhere").string();
  try {
    ClipDataset missing(d, 1);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), "data_path_missing");
    EXPECT_NE(std::string(e.what()).find("data.valid_path \"" + d.valid_path + "\""),
              std::string::npos)
        << e.what();
  }
  fs::create_directories(dir.path() / "junk");
  writeText(dir.path() / "junk/x.mp4", "not a video");
  d.valid_path = (dir.path() / "junk").string();
  try {
    ClipDataset junk(d, 1);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), "dataset_empty");
    EXPECT_NE(std::string(e.what()).find("data.valid_path"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.mp4"), std::string::npos) << e.what();
  }
}

TEST(DataImages, GrayAlphaAndOddSizesBecomeOneFrameSquares) {
  TempFolder dir;
  const fs::path root = dir.path() / "images";
  fs::create_directories(root / "nested");
  for (auto [name, w, h] :
       {std::tuple{"a.png", 40, 20}, {"nested/b.PNG", 20, 30}, {"c.bmp", 16, 16}}) {
    const media::VideoFrames f = makeClip(w, h, 1, 0);
    media::writePng((root / name).string(), w, h, f.rgb.data());
  }
  writeText(root / "broken.jpg", "not a jpeg");
  core::DataConfig d;
  d.type = core::DataType::Images;
  d.path = root.string();
  d.image_size = 12;
  d.num_frames = 1;
  d.valid_fraction = 0;
  ClipDataset data(d, 5);
  EXPECT_EQ(data.trainSize(), 3);
  ASSERT_EQ(data.indexSkips().size(), 1u);
  EXPECT_EQ(data.indexSkips()[0].path, "broken.jpg");
  for (std::int64_t position = 0; position < 6; ++position) {
    EXPECT_EQ(data.trainSample(position).sizes(), (std::vector<std::int64_t>{3, 1, 12, 12}));
  }
}

TEST(DataLoader, PrefetchingThreadsGiveTheSameBatchesAsNoThreads) {
  core::DataConfig d;
  d.image_size = 16;
  d.num_frames = 3;
  d.synthetic_clips = 20;
  ClipDataset data(d, 11);
  ClipLoader serial(data, 3, 0, 1);
  ClipLoader threaded(data, 3, 3, 4);
  std::vector<torch::Tensor> batches;
  for (int k = 0; k < 10; ++k) {  // 30 samples: crosses an epoch of 18 training clips
    const LoadedBatch a = serial.next();
    const LoadedBatch b = threaded.next();
    ASSERT_EQ(a.clips.sizes(), (std::vector<std::int64_t>{3, 3, 3, 16, 16}));
    EXPECT_TRUE(torch::equal(a.clips, b.clips)) << "batch " << k;
    EXPECT_GE(b.wait_s, 0.0);
    batches.push_back(a.clips);
  }
  // Restarting (resume, rollback) continues exactly where the batch index says.
  threaded.restart(6);
  EXPECT_TRUE(torch::equal(threaded.next().clips, batches[6]));
  EXPECT_TRUE(torch::equal(threaded.next().clips, batches[7]));
  // Two ranks see disjoint halves of the global batch sequence.
  ClipLoader rank0(data, 3, 1, 2, 0, 2), rank1(data, 3, 1, 2, 1, 2);
  EXPECT_TRUE(torch::equal(rank0.next().clips, batches[0]));
  EXPECT_TRUE(torch::equal(rank1.next().clips, batches[1]));
}

TEST(DataTraining, TrainsOnAVideoFolderSkippingBrokenFilesWithWarnings) {
  TempFolder dir;
  const fs::path root = dir.path() / "videos";
  makeVideoFolder(root);
  core::RunConfig c;
  c.data = videoData(root);
  c.data.workers = 2;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {
      {"residual", {}}, {"compress_space", {}}, {"compress_time", {}}, {"residual", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  c.loss.perceptual_weight = 0;
  c.loss.adversarial_weight = 0;
  c.train.batch_size = 2;
  c.train.max_steps = 4;
  c.train.log_every = 2;
  c.train.valid_every = 4;
  c.train.threads = 1;
  const fs::path run = dir.path() / "run";
  const testing::RunResult result = testing::train(c, run);
  ASSERT_EQ(result.code, 0);
  std::string events;
  for (const auto& line : result.events) events += line + "\n";
  for (const char* name : {"short.mkv", "empty.mp4", "text.mp4", "cut.mp4"}) {
    EXPECT_NE(events.find("skipping " + (root / name).string()), std::string::npos) << name << "\n"
                                                                                    << events;
  }
  EXPECT_TRUE(fs::exists(run / "data_index.json"));
  bool saw_skips = false, saw_valid = false;
  std::ifstream metrics(run / "metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) {
    const auto row = core::parseMetricsLine(line);
    if (!row) continue;
    for (const auto& [name, value] : row->values) {
      if (name == "data/skipped_files") saw_skips = value == 4.0;
      if (name == "valid/psnr") saw_valid = std::isfinite(value);
    }
  }
  EXPECT_TRUE(saw_skips);
  EXPECT_TRUE(saw_valid);
  EXPECT_EQ(events.find("no_validation"), std::string::npos) << "validation had clips";

  // One usable video: validation takes whole files, so it gets none; the run says so (it said
  // nothing, and trained without validation, samples or rFID/rFVD).
  const fs::path one = dir.path() / "one";
  fs::create_directories(one);
  fs::copy_file(root / "good/a.mkv", one / "a.mkv");
  c.data = videoData(one);
  c.train.max_steps = 2;
  const testing::RunResult single = testing::train(c, dir.path() / "run_one");
  ASSERT_EQ(single.code, 0);
  std::string warned;
  for (const auto& line : single.events) {
    if (line.find("\"code\":\"no_validation\"") != std::string::npos) warned = line;
  }
  EXPECT_NE(warned.find("1 usable file(s) leave none"), std::string::npos) << warned;
}

}  // namespace
}  // namespace tb::trainer::data
