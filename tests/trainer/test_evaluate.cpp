// `evaluate` over real files with the recipe's feature networks (no weight files needed): the
// card records the protocol, the weight file's SHA-256 and the small-N warnings; the reals'
// statistics are cached and reused to the bit; broken and too short files are named and skipped.
#include "core/compare_report.h"
#include "core/config_io.h"
#include "core/metrics_log.h"
#include "core/sha256.h"
#include "tests/trainer/fid_fvd_recipe.h"
#include "tests/trainer/test_support.h"
#include "trainer/cli/compare_command.h"
#include "trainer/cli/evaluate_command.h"
#include "trainer/cli/model_commands.h"
#include "trainer/evaluation/fid_inception.h"
#include "trainer/evaluation/fvd_i3d.h"
#include "trainer/training/training_run.h"
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::TempFolder;

Json readJson(const fs::path& file) {
  std::ifstream in(file);
  return Json::parse(in);
}

bool anyContains(const Json& lines, const std::string& text) {
  for (const Json& line : lines)
    if (line.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

// A checkpoint written by `init` for `config`.
fs::path initCheckpointOf(const TempFolder& dir, const core::RunConfig& config) {
  const fs::path file = dir.path() / "config.json";
  std::ofstream(file) << core::toJsonText(config);
  const fs::path ckpt = dir.path() / "ckpt";
  EXPECT_EQ(cli::initCheckpoint(file.string(), "", ckpt), 0);
  return ckpt;
}

TEST(Evaluate, ImagesGiveACardAndTheRealsStatisticsAreReused) {
#if !TB_WITH_OPENCV
  GTEST_SKIP() << "writing the test images needs a build with OpenCV";
#else
  TempFolder dir;
  core::RunConfig config = testing::tinyConfig();
  config.model.kind = core::ModelKind::Vqgan;
  config.model.vqgan.base_channels = 8;
  config.model.vqgan.channel_mult = {1, 2};
  config.model.vqgan.num_res_blocks = 1;
  config.model.vqgan.attn_resolutions = {};
  config.model.vqgan.z_channels = 8;
  const fs::path ckpt = initCheckpointOf(dir, config);
  const fs::path data = dir.path() / "images";
  fs::create_directories(data);
  const media::VideoFrames frames = testing::makeClip(24, 20, 10, 10.0);
  for (int t = 0; t < frames.count; ++t)
    media::writePng((data / ("image_" + std::to_string(t) + ".png")).string(), frames.width,
                    frames.height, frames.frame(t));
  std::ofstream(data / "empty.png");  // zero bytes: named and skipped

  metrics::FidInception inception;
  const std::string weights = dir.file("pt_inception.pth");
  testing::saveGeneratedWeights(*inception, 8.0, weights);
  cli::EvaluateArgs args;
  args.checkpoints = {"tiny=" + ckpt.string()};
  args.data = data.string();
  args.out = dir.file("eval");
  args.fid_weights = weights;
  args.cache = dir.file("cache");
  args.batch = 4;
  const auto first = testing::captured([&] { return cli::evaluate(args); });
  ASSERT_EQ(first.code, 0) << first.err;
  const Json card = readJson(dir.path() / "eval" / "card.json");
  EXPECT_EQ(card["data"]["type"], "images");
  EXPECT_EQ(card["data"]["evaluated"], 10);
  ASSERT_EQ(card["data"]["skipped"].size(), 1u);
  EXPECT_NE(card["data"]["skipped"][0]["path"].get<std::string>().find("empty.png"),
            std::string::npos);
  EXPECT_EQ(card["feature_network"]["sha256"], core::sha256OfFile(weights));
  EXPECT_FALSE(card["reals_cached"].get<bool>());
  EXPECT_TRUE(anyContains(card["warnings"], "not more than the 2048 feature dimensions"));
  EXPECT_TRUE(anyContains(card["warnings"], "50,000 ImageNet validation images"));
  const Json& row = card["tokenizers"][0];
  EXPECT_EQ(row["rfid_samples"], 10);
  EXPECT_GT(row["rfid"].get<double>(), 0.0);  // an untrained tokenizer: far from the originals
  EXPECT_GT(row["psnr"].get<double>(), 0.0);
  const Json metrics = readJson(dir.path() / "eval" / "metrics.json");
  EXPECT_EQ(metrics["tokenizers"][0]["rfid"], row["rfid"]);
  EXPECT_NE(first.out.find("| tiny |"), std::string::npos) << first.out;  // the card's table
  EXPECT_NE(first.err.find("ETA"), std::string::npos);

  // The same data again: the reals' statistics come from the cache, and the figure is the same.
  args.out = dir.file("eval2");
  const auto second = testing::captured([&] { return cli::evaluate(args); });
  ASSERT_EQ(second.code, 0) << second.err;
  const Json again = readJson(dir.path() / "eval2" / "card.json");
  EXPECT_TRUE(again["reals_cached"].get<bool>());
  EXPECT_EQ(again["reals_cache"], card["reals_cache"]);
  EXPECT_EQ(again["tokenizers"][0]["rfid"].get<double>(), row["rfid"].get<double>());

  // Fewer images are other data: not the cached statistics.
  args.out = dir.file("eval3");
  args.num = 4;
  const auto fewer = testing::captured([&] { return cli::evaluate(args); });
  ASSERT_EQ(fewer.code, 0) << fewer.err;
  const Json four = readJson(dir.path() / "eval3" / "card.json");
  EXPECT_FALSE(four["reals_cached"].get<bool>());
  EXPECT_EQ(four["tokenizers"][0]["rfid_samples"], 4);

  // The other network's weights, and a weight file that is not one, are refused by name.
  args.fvd_weights = weights;
  args.fid_weights.clear();
  const auto wrong = testing::captured([&] { return cli::evaluate(args); });
  EXPECT_EQ(wrong.code, 2);
  EXPECT_NE(wrong.err.find("holds images; rFID takes --fid-weights"), std::string::npos)
      << wrong.err;
  args.fvd_weights.clear();
  args.fid_weights = (data / "image_0.png").string();
  const auto broken = testing::captured([&] { return cli::evaluate(args); });
  EXPECT_EQ(broken.code, 2);
  EXPECT_NE(broken.err.find("image_0.png"), std::string::npos) << broken.err;
#endif
}

TEST(Evaluate, VideosGiveRfvdAndShortVideosAreSkipped) {
#if !TB_WITH_FFMPEG
  GTEST_SKIP() << "writing the test videos needs a build with FFmpeg";
#else
  TempFolder dir;
  const fs::path ckpt = initCheckpointOf(dir, testing::tinyConfig());
  const fs::path data = dir.path() / "videos";
  fs::create_directories(data);
  for (int k = 0; k < 3; ++k)
    media::writeVideo((data / ("clip_" + std::to_string(k) + ".mkv")).string(),
                      testing::makeClip(24 + 4 * k, 20, 9, 10.0));
  media::writeVideo((data / "short.mkv").string(), testing::makeClip(24, 20, 5, 10.0));

  metrics::FvdI3d i3d;
  const std::string weights = dir.file("i3d_pretrained_400.pt");
  testing::saveGeneratedWeights(*i3d, 6.0, weights);
  cli::EvaluateArgs args;
  args.checkpoints = {"tiny=" + ckpt.string()};
  args.data = data.string();
  args.out = dir.file("eval");
  args.fvd_weights = weights;
  args.cache = dir.file("cache");
  args.frames = 5;
  const auto refused = testing::captured([&] { return cli::evaluate(args); });
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--frames 5: the I3D of rFVD needs at least 9"), std::string::npos)
      << refused.err;

  args.frames = 9;
  const auto result = testing::captured([&] { return cli::evaluate(args); });
  ASSERT_EQ(result.code, 0) << result.err;
  const Json card = readJson(dir.path() / "eval" / "card.json");
  EXPECT_EQ(card["data"]["type"], "videos");
  EXPECT_EQ(card["protocol"]["frames"], 9);
  EXPECT_EQ(card["data"]["evaluated"], 3);
  ASSERT_EQ(card["data"]["skipped"].size(), 1u);
  EXPECT_NE(card["data"]["skipped"][0]["path"].get<std::string>().find("short.mkv"),
            std::string::npos);
  EXPECT_EQ(card["tokenizers"][0]["rfvd_samples"], 3);
  EXPECT_GT(card["tokenizers"][0]["rfvd"].get<double>(), 0.0);
  EXPECT_TRUE(anyContains(card["warnings"], "UCF-101 test split"));
#endif
}

// Training with eval.every_steps: valid/rfid and its N in metrics.jsonl at every evaluation, the
// reals' statistics written once into <run>/eval/ and read again by a resumed run.
TEST(Evaluate, TrainingLogsRfidAndAResumeReusesTheRealsStatistics) {
  TempFolder dir;
  metrics::FidInception inception;
  const std::string weights = dir.file("pt_inception.pth");
  testing::saveGeneratedWeights(*inception, 8.0, weights);
  core::RunConfig config = testing::tinyConfig();
  config.data.synthetic_clips = 40;  // 4 held out
  config.train.max_steps = 4;
  config.train.checkpoint_every = 2;
  config.eval.every_steps = 2;
  config.eval.clips = 3;
  config.eval.fid_weights = weights;
  const fs::path run = dir.path() / "run";
  ASSERT_EQ(testing::train(config, run).code, 0);

  const auto rows = [&] {
    std::vector<core::MetricsRow> out;
    std::ifstream in(run / "metrics.jsonl");
    for (std::string line; std::getline(in, line);)
      if (auto row = core::parseMetricsLine(line)) out.push_back(*row);
    return out;
  };
  const auto valueAt = [&](std::int64_t step, const std::string& name) {
    std::optional<double> value;
    for (const auto& row : rows())
      if (row.step == step)
        for (const auto& [key, v] : row.values)
          if (key == name) value = v;
    return value;
  };
  for (const std::int64_t step : {2, 4}) {
    const auto rfid = valueAt(step, "valid/rfid");
    ASSERT_TRUE(rfid) << "no valid/rfid at step " << step;
    EXPECT_TRUE(std::isfinite(*rfid) && *rfid > 0) << *rfid;
    EXPECT_EQ(valueAt(step, "eval/rfid_samples"), 15.0);  // 3 clips x 5 frames
  }
  std::vector<fs::path> cached;
  for (const auto& entry : fs::directory_iterator(run / "eval")) cached.push_back(entry.path());
  ASSERT_EQ(cached.size(), 1u);
  const auto written = fs::last_write_time(cached[0]);

  config.train.max_steps = 6;
  ASSERT_EQ(testing::train(config, run, true).code, 0);
  EXPECT_TRUE(valueAt(6, "valid/rfid"));
  EXPECT_EQ(fs::last_write_time(cached[0]), written);  // read, not computed again

  // A weight file that is not one ends the run with an error naming the key and the file.
  config.eval.fid_weights = (run / "metrics.jsonl").string();
  const auto bad = testing::train(config, dir.path() / "bad");
  EXPECT_NE(bad.code, 0);
  bool named = false;
  for (const auto& e : bad.events)
    named |= e.find("eval.fid_weights") != std::string::npos &&
             e.find("metrics.jsonl") != std::string::npos;
  EXPECT_TRUE(named);
}

// compare --fid-weights: rFID of each tokenizer over every compared frame in the report's mean,
// with its N; --fvd-weights on clips shorter than the I3D takes is refused naming the option.
TEST(Evaluate, CompareAddsRfidOverEveryComparedFrame) {
  TempFolder dir;
  const fs::path ckpt = initCheckpointOf(dir, testing::tinyConfig());
  metrics::FidInception inception;
  const std::string weights = dir.file("pt_inception.pth");
  testing::saveGeneratedWeights(*inception, 8.0, weights);
  core::CompareCommand command;
  command.entries = {{"tiny", ckpt.string()}};
  command.out_dir = dir.file("compare");
  command.clips = 2;
  command.fid_weights = weights;
  const auto result = testing::captured([&] { return cli::compare(command); });
  ASSERT_EQ(result.code, 0) << result.err;
  std::ifstream in(dir.path() / "compare" / "metrics.json");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string why;
  const auto report = core::parseCompareReport(text, &why);
  ASSERT_TRUE(report) << why;
  ASSERT_TRUE(report->mean[0].rfid);
  EXPECT_TRUE(std::isfinite(*report->mean[0].rfid) && *report->mean[0].rfid > 0);
  EXPECT_EQ(report->rfid_samples, std::optional<std::int64_t>(10));  // 2 clips x 5 frames
  EXPECT_FALSE(report->mean[0].rfvd);
  EXPECT_NE(result.err.find("biased upward"), std::string::npos) << result.err;

  // Without the flag, the first checkpoint's eval.fid_weights when the file is here.
  core::RunConfig with_eval = testing::tinyConfig();
  with_eval.eval.fid_weights = weights;
  TempFolder other;
  command.entries = {{"tiny", initCheckpointOf(other, with_eval).string()}};
  command.fid_weights.clear();
  command.out_dir = dir.file("compare_config");
  const auto configured = testing::captured([&] { return cli::compare(command); });
  ASSERT_EQ(configured.code, 0) << configured.err;
  std::ifstream again(dir.path() / "compare_config" / "metrics.json");
  const auto from_config =
      core::parseCompareReport(std::string((std::istreambuf_iterator<char>(again)), {}), &why);
  ASSERT_TRUE(from_config) << why;
  EXPECT_TRUE(from_config->mean[0].rfid);

  command.fvd_weights = weights;
  const auto refused = testing::captured([&] { return cli::compare(command); });
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("--fvd-weights: the compared clips have 5 frames"), std::string::npos)
      << refused.err;
}

}  // namespace
}  // namespace tb::trainer
