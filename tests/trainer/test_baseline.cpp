// The classic VQ reference codec: k-means against a plain slow implementation, the block codec's
// geometry, the codec folder that compare and tokenize accept, and the one PSNR that validation
// and compare share.

#include "core/config_io.h"
#include "core/metrics_log.h"
#include "core/presets.h"
#include "core/reference_codec_info.h"
#include "tests/trainer/test_support.h"
#include "trainer/baseline/block_kmeans.h"
#include "trainer/baseline/classic_vq_codec.h"
#include "trainer/baseline/reference_fit.h"
#include "trainer/cli/compare_command.h"
#include "trainer/cli/token_commands.h"
#include "trainer/evaluation/clip_scores.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>

namespace tb::trainer::baseline {
namespace {

namespace fs = std::filesystem;
using testing::TempFolder;

// Clustered points: `clusters` blobs in `dim` dimensions, deterministic.
torch::Tensor blobs(std::int64_t n, std::int64_t dim, std::int64_t clusters, std::uint64_t seed) {
  torch::manual_seed(seed);
  const torch::Tensor centres = torch::randn({clusters, dim}) * 4;
  const torch::Tensor which = torch::randint(clusters, {n}, torch::kInt64);
  return (centres.index_select(0, which) + torch::randn({n, dim})).contiguous();
}

// The textbook loops: nearest centroid by comparing every distance, means by summing points.
std::vector<std::int64_t> slowAssign(const torch::Tensor& points, const torch::Tensor& centroids) {
  const auto p = points.accessor<float, 2>();
  const auto c = centroids.accessor<float, 2>();
  std::vector<std::int64_t> out(static_cast<std::size_t>(points.size(0)));
  for (std::int64_t i = 0; i < points.size(0); ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (std::int64_t j = 0; j < centroids.size(0); ++j) {
      double d = 0;
      for (std::int64_t k = 0; k < points.size(1); ++k)
        d += (p[i][k] - c[j][k]) * double(p[i][k] - c[j][k]);
      if (d < best) {
        best = d;
        out[static_cast<std::size_t>(i)] = j;
      }
    }
  }
  return out;
}

torch::Tensor slowLloyd(const torch::Tensor& points, torch::Tensor centroids, int iterations) {
  for (int it = 0; it < iterations; ++it) {
    const auto assign = slowAssign(points, centroids);
    std::vector<std::vector<double>> sums(
        static_cast<std::size_t>(centroids.size(0)),
        std::vector<double>(static_cast<std::size_t>(points.size(1)), 0.0));
    std::vector<int> counts(static_cast<std::size_t>(centroids.size(0)), 0);
    const auto p = points.accessor<float, 2>();
    for (std::int64_t i = 0; i < points.size(0); ++i) {
      const auto j = static_cast<std::size_t>(assign[static_cast<std::size_t>(i)]);
      ++counts[j];
      for (std::int64_t k = 0; k < points.size(1); ++k)
        sums[j][static_cast<std::size_t>(k)] += p[i][k];
    }
    auto c = centroids.accessor<float, 2>();
    for (std::size_t j = 0; j < counts.size(); ++j) {
      if (counts[j] == 0) continue;  // the blobs below leave no cluster empty
      for (std::size_t k = 0; k < sums[j].size(); ++k)
        c[static_cast<std::int64_t>(j)][static_cast<std::int64_t>(k)] =
            static_cast<float>(sums[j][k] / counts[j]);
    }
  }
  return centroids;
}

TEST(BlockKMeans, NearestCentroidMatchesTheSlowSearch) {
  const torch::Tensor points = blobs(3000, 12, 10, 1);
  const torch::Tensor centroids = blobs(40, 12, 10, 2);
  torch::Tensor distances;
  const torch::Tensor fast = nearestCentroid(points, centroids, &distances);
  const auto slow = slowAssign(points, centroids);
  const auto* f = fast.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < slow.size(); ++i) ASSERT_EQ(f[i], slow[i]) << "point " << i;
  const torch::Tensor exact = (points - centroids.index_select(0, fast)).pow(2).sum(1);
  EXPECT_TRUE(torch::allclose(distances, exact, 1e-3, 1e-3));
}

TEST(BlockKMeans, LloydIterationsMatchTheSlowImplementation) {
  const torch::Tensor points = blobs(2000, 6, 8, 3);
  const torch::Tensor seeds = points.slice(0, 0, 8).clone();
  const KMeansResult fast = lloydIterations(points, seeds.clone(), 6);
  const torch::Tensor slow = slowLloyd(points, seeds.clone(), fast.iterations);
  EXPECT_GE(fast.iterations, 1);
  EXPECT_TRUE(torch::allclose(fast.centroids, slow, 1e-4, 1e-4))
      << (fast.centroids - slow).abs().max().item<float>();
  const torch::Tensor assign = nearestCentroid(points, fast.centroids);
  const double msd =
      (points - fast.centroids.index_select(0, assign)).pow(2).sum(1).mean().item<double>();
  EXPECT_NEAR(fast.mean_squared_distance, msd, 1e-3 * msd);
}

TEST(BlockKMeans, FitIsDeterministicForASeedAndFindsTheBlobs) {
  const torch::Tensor points = blobs(5000, 8, 16, 4);
  KMeansOptions options;
  options.clusters = 16;
  options.iterations = 20;
  options.seed = 7;
  const KMeansResult a = fitKMeans(points, options);
  const KMeansResult b = fitKMeans(points, options);
  EXPECT_TRUE(torch::equal(a.centroids, b.centroids));
  // Unit-variance blobs: about one unit of squared distance per dimension when every blob has its
  // centroid.
  EXPECT_LT(a.mean_squared_distance, 8 * 1.3);
  options.seed = 8;
  EXPECT_FALSE(torch::equal(fitKMeans(points, options).centroids, a.centroids));
  options.clusters = 6000;
  EXPECT_THROW(fitKMeans(points, options), std::invalid_argument);
}

TEST(ClassicVqCodec, QuickStartGridIsTwoByTwoByTwoBlocksAndItsBits) {
  const core::ConfigLoad load = core::loadPreset("quick-start");
  ASSERT_TRUE(load.ok());
  const ReferenceShape shape = referenceShapeOf(load.config);
  EXPECT_EQ(shape.geometry.space_factor, 2);
  EXPECT_EQ(shape.geometry.time_factor, 2);
  EXPECT_TRUE(shape.geometry.first_frame_alone);
  EXPECT_EQ(shape.codebook_size, 1000);  // FSQ [8, 5, 5, 5]
  EXPECT_DOUBLE_EQ(shape.bits_per_token, std::log2(1000.0));
  EXPECT_EQ(classicVqName(shape.bits_per_token), "classic VQ, 9.97 bits/token");
  const auto tokenizer = makeTokenizer(load.config.model, load.config.data);
  EXPECT_EQ(shape.geometry.tokenGrid(17, 64), tokenizer->tokenGrid(17, 64));
}

TEST(ClassicVqCodec, BlocksRoundTripAndExactCodebooksReconstructExactly) {
  BlockGeometry g;
  g.time_factor = 2;
  g.space_factor = 2;
  g.first_frame_alone = true;
  torch::manual_seed(0);
  const torch::Tensor video = torch::rand({2, 3, 5, 4, 6}) * 2 - 1;
  ClassicVqCodec cutter(g, torch::zeros({2, 1, g.blockDim()}));
  const torch::Tensor blocks = cutter.encode(video);
  ASSERT_EQ(blocks.sizes(), (std::vector<std::int64_t>{2, 24, 3, 2, 3}));
  EXPECT_TRUE(torch::allclose(cutter.decode(blocks), video));
  // Pixel (t=3, y=1, x=4) of clip 1 is in latent frame 2 (frames 3-4) at time offset 0, block
  // (0, 2), offset (y 1, x 0); a block's values are ordered channel, time, y, x.
  EXPECT_FLOAT_EQ(blocks[1][(0 * 2 + 0) * 4 + 1 * 2 + 0][2][0][2].item<float>(),
                  video[1][0][3][1][4].item<float>());
  // Codebooks holding exactly the clip's blocks give back the clip.
  const torch::Tensor rows = blocks.movedim(1, -1);
  const torch::Tensor first = rows.slice(1, 0, 1).reshape({-1, 24}),
                      rest = rows.slice(1, 1).reshape({-1, 24});
  ClassicVqCodec exact(
      g,
      torch::stack({torch::cat({first, torch::zeros({rest.size(0) - first.size(0), 24})}), rest}));
  const TokenizerOutput out = exact.forward(video);
  EXPECT_TRUE(torch::allclose(out.recon, video, 1e-5, 1e-5));
  ASSERT_EQ(out.indices.sizes(), (std::vector<std::int64_t>{2, 3, 2, 3}));
  EXPECT_TRUE(torch::allclose(exact.decodeFromIndices(out.indices), video, 1e-5, 1e-5));
}

core::RunConfig tinyConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.data.synthetic_clips = 40;
  c.data.hflip = false;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  c.train.valid_clips = 4;
  c.train.threads = 1;
  return c;
}

TEST(ReferenceFit, FolderIsDeterministicAndWorksWhereACheckpointDoes) {
  TempFolder dir;
  const core::RunConfig config = tinyConfig();
  data::ClipDataset dataset(config.data, 0);
  ReferenceFitOptions options;
  options.blocks = 4000;
  options.valid_clips = 4;
  const ReferenceFit a = fitReferenceCodec(config, dataset, options);
  const ReferenceFit b = fitReferenceCodec(config, dataset, options);
  EXPECT_TRUE(torch::equal(a.codec->quantizer()->named_buffers()["codebooks"],
                           b.codec->quantizer()->named_buffers()["codebooks"]));
  EXPECT_EQ(a.info.name, "classic VQ, 6 bits/token");
  EXPECT_EQ(a.info.fit_blocks, 8000);  // both codebooks full
  ASSERT_TRUE(a.info.valid_psnr.has_value());
  // Scored as validation scores: the same clips through scoreClip.
  double psnr = 0;
  for (int i = 0; i < 4; ++i) {
    const torch::Tensor x = dataset.validSample(i);
    psnr += metrics::scoreClip(x, a.codec->forward(x.unsqueeze(0)).recon[0]).psnr / 4;
  }
  EXPECT_NEAR(*a.info.valid_psnr, psnr, 1e-9);
  // 64 centroids of 2x2x2 blocks of the procedural clips: 18.6 dB measured on these 4 clips.
  EXPECT_GT(*a.info.valid_psnr, 16.0);

  const fs::path folder = dir.path() / "reference";
  writeReferenceFolder(a, config, folder);
  const auto info = core::readReferenceCodecInfo(folder / kReferenceFile);
  ASSERT_TRUE(info.has_value());
  EXPECT_DOUBLE_EQ(*info->valid_psnr, *a.info.valid_psnr);
  const cli::LoadedCheckpoint loaded = cli::loadCheckpoint(folder, true, "cpu");
  EXPECT_EQ(loaded.kind, "classic_vq");
  EXPECT_EQ(loaded.label, "classic VQ, 6 bits/token");
  const torch::Tensor clip = dataset.validSample(0).unsqueeze(0);
  EXPECT_TRUE(torch::equal(loaded.tokenizer->tokenize(clip), a.codec->tokenize(clip)));

  core::CompareCommand args;
  args.entries = {{"classic-vq", folder.string()}};
  args.out_dir = (dir.path() / "review").string();
  args.clips = 2;
  ASSERT_EQ(cli::compare(args), 0);
  std::ifstream in(dir.path() / "review" / "metrics.json");
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["tokenizers"][0]["model_kind"], "classic_vq");
  EXPECT_EQ(report["tokenizers"][0]["label"], "classic VQ, 6 bits/token");
  EXPECT_GT(report["mean"]["classic-vq"]["psnr"].get<double>(), 16.0);
}

#if TB_WITH_FFMPEG
// One PSNR: a run's last valid/psnr is compare's mean PSNR for the same weights and clips, whole
// clips for both although the run trained on smaller windows of them (with the default GAN from
// step 0, whose discriminator is built for the windows: it was built for whole frames and
// failed at the first step).
TEST(OnePsnr, LastValidationPsnrEqualsCompareOnTheSameClips) {
  TempFolder dir;
  fs::create_directories(dir.path() / "train");
  fs::create_directories(dir.path() / "held");
  for (int i = 0; i < 2; ++i) {
    media::writeVideo(dir.file("train/t" + std::to_string(i) + ".mkv"),
                      testing::makeClip(24, 20, 12, 8.0));
  }
  for (int i = 0; i < 3; ++i) {  // exactly one clip each: the middle clip is the first one
    auto clip = testing::makeClip(20 + 4 * i, 16, 5, 8.0);
    media::writeVideo(dir.file("held/h" + std::to_string(i) + ".mkv"), clip);
  }
  core::RunConfig config = tinyConfig();
  config.data.type = core::DataType::Videos;
  config.data.path = dir.file("train");
  config.data.valid_path = dir.file("held");
  config.data.train_crop = 8;
  config.data.train_frames = 3;
  config.train.max_steps = 3;
  config.train.valid_every = 3;
  config.train.valid_clips = 3;
  config.train.checkpoint_every = 0;
  config.train.ema_start_step = 1;
  config.train.ema_update_every = 1;
  config.train.reference_codec = true;
  const fs::path run = dir.path() / "run";
  ASSERT_EQ(testing::train(config, run).code, 0);
  double valid_psnr = 0;
  std::ifstream rows(run / "metrics.jsonl");
  for (std::string line; std::getline(rows, line);) {
    const auto row = core::parseMetricsLine(line);
    if (!row) continue;
    for (const auto& [name, v] : row->values) {
      if (name == "valid/psnr") valid_psnr = v;
    }
  }
  ASSERT_GT(valid_psnr, 0);
  core::CompareCommand args;
  args.entries = {{"trained", run.string()}, {"classic-vq", (run / "reference").string()}};
  args.data_dir = dir.file("held");
  args.clips = 3;
  args.out_dir = dir.file("review");
  ASSERT_EQ(cli::compare(args), 0);
  std::ifstream in(dir.path() / "review" / "metrics.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["clips"].size(), 3u);
  EXPECT_EQ(report["clips"][0]["frames"], 5);  // data.num_frames, not data.train_frames
  EXPECT_NEAR(report["mean"]["trained"]["psnr"].get<double>(), valid_psnr, 1e-9);
  // The reference scored at training start is compare's figure for it, too.
  const auto info = core::readReferenceCodecInfo(core::RunDirectory(run).referenceInfoFile());
  ASSERT_TRUE(info.has_value());
  EXPECT_NEAR(report["mean"]["classic-vq"]["psnr"].get<double>(), *info->valid_psnr, 1e-9);
}
#endif

}  // namespace
}  // namespace tb::trainer::baseline
