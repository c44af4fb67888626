// tokenize / detokenize on real files: videos encoded here with FFmpeg, a PNG, checkpoints
// written by `init`, token files read back with the safetensors parser.

#include "core/compare_report.h"
#include "core/config_io.h"
#include "core/safetensors.h"
#include "tests/trainer/test_support.h"
#include "trainer/cli/compare_command.h"
#include "trainer/cli/metrics_commands.h"
#include "trainer/cli/model_commands.h"
#include "trainer/cli/token_commands.h"
#include "trainer/evaluation/image_metrics.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_FFMPEG && TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#include "trainer/media/video_decoder.h"
#include "trainer/media/video_encoder.h"
#endif

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

namespace tb::trainer::cli {
namespace {
#if TB_WITH_FFMPEG && TB_WITH_OPENCV

namespace fs = std::filesystem;
using testing::TempFolder;

core::RunConfig tinyConfig() {
  core::RunConfig c;
  c.data.image_size = 16;
  c.data.num_frames = 5;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.layers = {{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}};
  c.model.input_conv_kernel = {3, 3, 3};
  c.model.quantizer.codebook_size = 64;
  return c;
}

/// `c` with a tiny per-frame VQGAN instead of MAGVIT-v2 (data, losses and training kept).
core::RunConfig asTinyVqgan(core::RunConfig c) {
  c.model.kind = core::ModelKind::Vqgan;
  c.model.vqgan.base_channels = 8;
  c.model.vqgan.channel_mult = {1, 2};
  c.model.vqgan.num_res_blocks = 1;
  c.model.vqgan.attn_resolutions = {};
  c.model.vqgan.z_channels = 8;
  return c;
}

/// A checkpoint folder written by `init`, a folder with a 12-frame lossless video (two 5-frame
/// clips and a dropped 2-frame tail) in a subfolder, a PNG and a broken "video".
struct Fixture {
  TempFolder dir;
  fs::path ckpt = dir.path() / "ckpt";
  fs::path input = dir.path() / "input";
  fs::path out = dir.path() / "tokens";

  Fixture() {
    const fs::path config = dir.path() / "config.json";
    std::ofstream(config) << core::toJsonText(tinyConfig());
    EXPECT_EQ(initCheckpoint(config.string(), "", ckpt), 0);
    fs::create_directories(input / "sub");
    media::writeVideo((input / "sub" / "walk.mkv").string(), testing::makeClip(40, 24, 12, 10.0));
    const auto still = testing::makeClip(20, 30, 1, 0.0);
    media::writePng((input / "still.png").string(), still.width, still.height, still.rgb.data());
    std::ofstream(input / "broken.mp4") << "not a video";
  }

  /// A tiny per-frame VQGAN checkpoint written by `init` beside the MAGVIT-v2 one.
  fs::path vqganCheckpoint() const {
    const fs::path config = dir.path() / "vq.json";
    std::ofstream(config) << core::toJsonText(asTinyVqgan(tinyConfig()));
    const fs::path folder = dir.path() / "vq_ckpt";
    EXPECT_EQ(initCheckpoint(config.string(), "", folder), 0);
    return folder;
  }

  /// Today's clip cutting: consecutive 5-frame clips.
  TokenizeArgs tokenizeArgs() const {
    TokenizeArgs args{ckpt.string(), input.string(), out.string(), 0, false};
    args.clip_frames = 5;
    return args;
  }
};

torch::Tensor readTokens(const fs::path& file, std::map<std::string, std::string>* meta = nullptr) {
  const auto f = core::SafetensorsFile::read(file);
  const core::TensorInfo* info = f.find("tokens");
  EXPECT_NE(info, nullptr) << file;
  EXPECT_EQ(info->dtype, core::DType::I32);
  if (meta != nullptr) *meta = f.metadata();
  return weights::readTensor(f, *info);
}

TEST(TokenCommands, TokenizeWritesOneFileOfModelTokensPerClip) {
  Fixture fx;
  ASSERT_EQ(tokenize(fx.tokenizeArgs()), 0);
  const auto ckpt = loadCheckpoint(fx.ckpt);
  torch::NoGradGuard no_grad;

  std::map<std::string, std::string> meta;
  const torch::Tensor second = readTokens(fx.out / "sub__walk_clip0001.safetensors", &meta);
  EXPECT_EQ(meta["frame_start"], "5");
  EXPECT_EQ(meta["frame_count"], "5");
  EXPECT_EQ(meta["codebook_size"], "64");
  EXPECT_EQ(meta["source"], (fx.input / "sub" / "walk.mkv").string());
  const auto grid = ckpt.tokenizer->tokenGrid(5, 16);
  EXPECT_EQ(second.sizes().vec(), std::vector<std::int64_t>(grid.begin(), grid.end()));

  // The same frames tokenized directly give the same tokens.
  media::VideoDecoder decoder((fx.input / "sub" / "walk.mkv").string());
  media::ClipRequest request;
  request.start = 5;
  request.count = 5;
  request.resizeShortSide = 16;
  request.cropSize = 16;
  const torch::Tensor clip = media::framesToTensor(decoder.decode(request)).unsqueeze(0);
  EXPECT_TRUE(torch::equal(second.to(torch::kInt64), ckpt.tokenizer->tokenize(clip).squeeze(0)));

  // Two whole clips of the video (the 2-frame tail dropped), one of the image, none of the broken
  // file.
  EXPECT_FALSE(fs::exists(fx.out / "sub__walk_clip0002.safetensors"));
  EXPECT_EQ(readTokens(fx.out / "still.safetensors").size(0), 1);
  nlohmann::json manifest;
  std::ifstream(fx.out / "manifest.json") >> manifest;
  ASSERT_EQ(manifest.size(), 3u);
  EXPECT_EQ(manifest[0]["clip"], "still");
  EXPECT_EQ(manifest[2]["clip"], "sub__walk_clip0001");
}

TEST(TokenCommands, TokenizeInBf16CodesAlmostTheSameAndRefusesWhatTheDeviceCannot) {
  Fixture fx;
  ASSERT_EQ(tokenize(fx.tokenizeArgs()), 0);
  const torch::Tensor fp32 = readTokens(fx.out / "sub__walk_clip0001.safetensors");
  TokenizeArgs args = fx.tokenizeArgs();
  args.out = (fx.dir.path() / "bf16").string();
  args.precision = "bf16";
  ASSERT_EQ(tokenize(args), 0);
  const torch::Tensor bf16 = readTokens(fs::path(args.out) / "sub__walk_clip0001.safetensors");
  ASSERT_EQ(bf16.sizes(), fp32.sizes());
  // The convolutions in bf16 move a latent value near a code boundary to the other side now and
  // then; most codes stay (unrelated codes would agree on 1 in 64).
  const double same = bf16.eq(fp32).to(torch::kDouble).mean().item<double>();
  EXPECT_GT(same, 0.5) << same;
  args.precision = "fp16";  // CPU autocast is bf16 only
  EXPECT_EQ(tokenize(args), 2);
  args.precision = "half";
  EXPECT_EQ(tokenize(args), 2);
}

TEST(TokenCommands, TokenizeCodesEachVideoWholeInChunksAsOnePass) {
  Fixture fx;
  TokenizeArgs args = fx.tokenizeArgs();
  args.clip_frames = 0;
  args.chunk = 2;
  std::string log;
  {
    testing::CapturedStderr err;
    ASSERT_EQ(tokenize(args), 0);
    log = err.text();
  }
  // 12 frames: a causal tokenizer with time factor 2 codes 1 + 2k of them.
  EXPECT_NE(log.find("walk.mkv: coding frames 0-10 of 12; this tokenizer codes 1 + k x 2 "
                     "frames, the last 1 dropped"),
            std::string::npos)
      << log;
  std::map<std::string, std::string> meta;
  const torch::Tensor tokens = readTokens(fx.out / "sub__walk.safetensors", &meta);
  EXPECT_EQ(meta["frame_count"], "11");
  EXPECT_EQ(meta["whole_video"], "true");
  const auto ckpt = loadCheckpoint(fx.ckpt);
  const auto grid = ckpt.tokenizer->tokenGrid(11, 16);
  EXPECT_EQ(tokens.sizes().vec(), std::vector<std::int64_t>(grid.begin(), grid.end()));
  EXPECT_EQ(tokens.size(0), 6);

  // Three chunks of 2 latent frames give what one pass over the 11 frames gives.
  media::VideoDecoder decoder((fx.input / "sub" / "walk.mkv").string());
  media::ClipRequest request;
  request.count = 11;
  request.resizeShortSide = 16;
  request.cropSize = 16;
  const torch::Tensor video = media::framesToTensor(decoder.decode(request)).unsqueeze(0);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(tokens.to(torch::kInt64), ckpt.tokenizer->tokenize(video).squeeze(0)));

  // Decoded whole, in chunks: 11 frames.
  const fs::path decoded = fx.dir.path() / "whole.mkv";
  DetokenizeArgs detok{fx.ckpt.string(), (fx.out / "sub__walk.safetensors").string(),
                       decoded.string(), 0, false};
  detok.chunk = 2;
  ASSERT_EQ(detokenize(detok), 0);
  EXPECT_EQ(media::VideoDecoder(decoded.string()).info().frameCount, 11);

  // --max-frames 6: the codable 5 of them.
  args.max_frames = 6;
  args.out = (fx.dir.path() / "short").string();
  {
    testing::CapturedStderr err;
    ASSERT_EQ(tokenize(args), 0);
    EXPECT_NE(err.text().find("coding frames 0-4 of 12; --max-frames 6; this tokenizer codes "
                              "1 + k x 2 frames, the last 1 dropped"),
              std::string::npos)
        << err.text();
  }
  EXPECT_EQ(readTokens(fx.dir.path() / "short" / "sub__walk.safetensors").size(0), 3);

  // Clips must be a length the tokenizer codes.
  args = fx.tokenizeArgs();
  args.clip_frames = 4;
  testing::CapturedStderr err;
  EXPECT_EQ(tokenize(args), 2);
  EXPECT_NE(err.text().find("--clip-frames 4: this tokenizer codes 1 + k x 2 frames (3 is the "
                            "nearest below)"),
            std::string::npos)
      << err.text();
}

TEST(TokenCommands, CompareScoresWholeVideosWhenAsked) {
  Fixture fx;
  const fs::path vq_ckpt = fx.vqganCheckpoint();
  core::CompareCommand args;
  args.entries = {{"magvit", fx.ckpt.string()}, {"vqgan", vq_ckpt.string()}};
  args.data_dir = fx.input.string();
  args.out_dir = (fx.dir.path() / "review").string();
  args.whole_videos = true;
  testing::CapturedStderr err;
  ASSERT_EQ(compare(args), 0);
  // 12 frames: MAGVIT-v2 (time factor 2) and the per-frame VQGAN both code the first 11.
  EXPECT_NE(err.text().find("walk.mkv: coding frames 0-10 of 12; these tokenizers code 1 + k x 1 "
                            "and 2 frames, the last 1 dropped"),
            std::string::npos)
      << err.text();
  std::ifstream in(fs::path(args.out_dir) / "metrics.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["clips"].size(), 1u);
  EXPECT_EQ(report["clips"][0]["frames"], 11);
  EXPECT_EQ(report["per_frame"]["magvit"]["psnr"].size(), 11u);
  EXPECT_EQ(report["tokenizers"][0]["token_grid"], nlohmann::json({6, 8, 8}));
  // In chunks, the figures of one pass over the 11 frames.
  media::VideoDecoder decoder((fx.input / "sub" / "walk.mkv").string());
  media::ClipRequest request;
  request.count = 11;
  request.resizeShortSide = 16;
  request.cropSize = 16;
  const media::VideoFrames original = decoder.decode(request);
  const LoadedCheckpoint magvit = loadCheckpoint(fx.ckpt);
  torch::NoGradGuard no_grad;
  const auto recon =
      media::tensorToFrames(magvit.tokenizer->forward(media::framesToTensor(original).unsqueeze(0))
                                .recon[0]
                                .clamp(-1, 1));
  EXPECT_NEAR(report["clips"][0]["metrics"]["magvit"]["psnr"].get<double>(),
              metrics::psnr(original, recon), 0.01);

  core::CompareCommand no_folder = args;
  no_folder.data_dir.clear();
  EXPECT_EQ(compare(no_folder), 2);
  EXPECT_NE(err.text().find("--whole-videos needs --data DIR of videos"), std::string::npos);
}

TEST(TokenCommands, DetokenizeDecodesExactlyWhatTheModelDecodes) {
  Fixture fx;
  ASSERT_EQ(tokenize(fx.tokenizeArgs()), 0);
  const fs::path tokens = fx.out / "sub__walk_clip0000.safetensors";
  const fs::path video = fx.dir.path() / "decoded.mkv";  // FFV1: lossless, so exact
  ASSERT_EQ(detokenize({fx.ckpt.string(), tokens.string(), video.string(), 0, false}), 0);

  media::VideoDecoder decoder(video.string());
  EXPECT_EQ(decoder.info().frameCount, 5);
  EXPECT_NEAR(decoder.info().fps, 10.0, 1e-6);  // the source's rate, from the metadata
  const media::VideoFrames frames = decoder.decodeAvailable().frames;
  torch::NoGradGuard no_grad;
  const auto ckpt = loadCheckpoint(fx.ckpt);
  const torch::Tensor expected =
      ckpt.tokenizer->decodeFromIndices(readTokens(tokens).to(torch::kInt64).unsqueeze(0))
          .squeeze(0);
  EXPECT_EQ(frames.rgb, media::tensorToFrames(expected).rgb);
}

TEST(TokenCommands, BadTokenFilesAndCheckpointsExitTwo) {
  Fixture fx;
  const std::string gif = (fx.dir.path() / "x.gif").string();
  const fs::path out_of_range = fx.dir.path() / "range.safetensors";
  weights::saveTensors({{"tokens", torch::full({2, 8, 8}, 64, torch::kInt32)}}, out_of_range);
  EXPECT_EQ(detokenize({fx.ckpt.string(), out_of_range.string(), gif, 0, false}), 2);
  const fs::path other_codebook = fx.dir.path() / "codebook.safetensors";
  weights::saveTensors({{"tokens", torch::zeros({2, 8, 8}, torch::kInt32)}}, other_codebook,
                       {{"codebook_size", "1024"}});
  EXPECT_EQ(detokenize({fx.ckpt.string(), other_codebook.string(), gif, 0, false}), 2);
  const fs::path wrong_name = fx.dir.path() / "name.safetensors";
  weights::saveTensors({{"codes", torch::zeros({2, 8, 8}, torch::kInt32)}}, wrong_name);
  EXPECT_EQ(detokenize({fx.ckpt.string(), wrong_name.string(), gif, 0, false}), 2);
  EXPECT_EQ(detokenize({fx.ckpt.string(), (fx.input / "broken.mp4").string(), gif, 0, false}), 2);
  EXPECT_FALSE(fs::exists(gif));

  TokenizeArgs args = fx.tokenizeArgs();
  args.input = (fx.input / "broken.mp4").string();  // nothing usable
  EXPECT_EQ(tokenize(args), 2);
  args = fx.tokenizeArgs();
  args.checkpoint = (fx.dir.path() / "missing").string();
  EXPECT_EQ(tokenize(args), 2);
  EXPECT_THROW(loadCheckpoint(fx.input), std::runtime_error);  // no checkpoint inside
}

TEST(TokenCommands, RunDirectoryMeansItsNewestCompleteCheckpoint) {
  Fixture fx;
  const fs::path run = fx.dir.path() / "run";
  for (const char* step : {"step_3", "step_12", ".step_20.tmp"}) {
    fs::create_directories(run / "checkpoints");
    fs::copy(fx.ckpt, run / "checkpoints" / step, fs::copy_options::recursive);
    if (std::string(step).rfind("step_", 0) == 0)
      std::ofstream(run / "checkpoints" / step / "COMPLETE");
  }
  EXPECT_EQ(loadCheckpoint(run).folder, run / "checkpoints" / "step_12");
  EXPECT_EQ(loadCheckpoint(run).weights, "model.safetensors");  // init writes no EMA weights
}

TEST(TokenCommands, CompareScoresMagvitAndVqganOnTheSameClips) {
  Fixture fx;
  const fs::path vq_ckpt = fx.vqganCheckpoint();

  core::CompareCommand args;
  args.entries = {{"magvit", fx.ckpt.string()}, {"vqgan", vq_ckpt.string()}};
  args.data_dir = fx.input.string();
  args.out_dir = (fx.dir.path() / "review").string();
  ASSERT_EQ(compare(args), 0);
  std::ifstream in(fs::path(args.out_dir) / "metrics.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["clips"].size(), 1u);  // walk.mkv's first clip; broken.mp4 skipped
  EXPECT_EQ(report["clips"][0]["source"], "sub/walk.mkv");
  // The scores are those of the checkpoint's own reconstruction of the clip.
  const LoadedCheckpoint magvit = loadCheckpoint(fx.ckpt);
  media::VideoDecoder decoder((fx.input / "sub" / "walk.mkv").string());
  media::ClipRequest request;
  request.count = 5;
  request.resizeShortSide = 16;
  request.cropSize = 16;
  const media::VideoFrames original = decoder.decode(request);
  torch::NoGradGuard no_grad;
  const auto recon =
      media::tensorToFrames(magvit.tokenizer->forward(media::framesToTensor(original).unsqueeze(0))
                                .recon[0]
                                .clamp(-1, 1));
  EXPECT_NEAR(report["clips"][0]["metrics"]["magvit"]["psnr"].get<double>(),
              metrics::psnr(original, recon), 1e-6);
  // By frame position: one clip, so each position is that frame's PSNR; their mean is the clip's.
  const auto& per_frame = report["per_frame"]["magvit"]["psnr"];
  ASSERT_EQ(per_frame.size(), 5u);
  double sum = 0;
  for (int t = 0; t < 5; ++t) {
    EXPECT_NEAR(
        per_frame[t].get<double>(),
        metrics::framePsnr(original.frame(t), recon.frame(t), original.width, original.height),
        1e-6);
    sum += per_frame[t].get<double>();
  }
  EXPECT_NEAR(sum / 5, report["mean"]["magvit"]["psnr"].get<double>(), 1e-6);
  EXPECT_EQ(report["per_frame"]["vqgan"]["ssim"].size(), 5u);
  for (const char* name : {"magvit", "vqgan"}) {
    EXPECT_TRUE(std::isfinite(report["mean"][name]["ssim"].get<double>())) << name;
  }
  for (const char* file : {"metrics.csv", "clip_000.gif", "grid.png"}) {
    EXPECT_GT(fs::file_size(fs::path(args.out_dir) / file), 0u) << file;
  }
  // The trainer's side of tests/golden/compare_report_v1.json: metrics.json is core's compare
  // report (it reads back and writes the same bytes), laid out as the golden document is.
  std::ifstream written_in(fs::path(args.out_dir) / "metrics.json", std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(written_in)),
                            std::istreambuf_iterator<char>());
  std::string error;
  const std::optional<core::CompareReport> parsed = core::parseCompareReport(written, &error);
  ASSERT_TRUE(parsed) << error;
  EXPECT_EQ(core::toJsonText(*parsed), written);
  EXPECT_EQ(parsed->tokenizers[1].model_kind, "vqgan");
  // Each tokenizer's source, its token grid for these clips and its bits per token.
  EXPECT_EQ(parsed->tokenizers[0].source, "Tokenbench MAGVIT-v2");
  EXPECT_EQ(parsed->tokenizers[1].source, "Tokenbench VQGAN");
  const auto grid = loadCheckpoint(fx.ckpt).tokenizer->tokenGrid(5, 16);
  EXPECT_EQ(parsed->tokenizers[0].token_grid, std::vector<std::int64_t>(grid.begin(), grid.end()));
  EXPECT_EQ(parsed->tokenizers[1].token_grid, (std::vector<std::int64_t>{5, 8, 8}));
  EXPECT_DOUBLE_EQ(parsed->tokenizers[0].bits_per_token, 6.0);  // 64 codes
  std::ifstream golden_in(std::string(TB_TEST_DATA_DIR) + "/golden/compare_report_v1.json");
  const auto golden = nlohmann::ordered_json::parse(golden_in);
  const auto mine = nlohmann::ordered_json::parse(written);
  auto keys = [](const nlohmann::ordered_json& object) {
    std::vector<std::string> names;
    for (auto it = object.begin(); it != object.end(); ++it) names.push_back(it.key());
    return names;
  };
  EXPECT_EQ(keys(mine), keys(golden));
  EXPECT_EQ(keys(mine["tokenizers"][0]), keys(golden["tokenizers"][0]));
  EXPECT_EQ(keys(mine["clips"][0]), keys(golden["clips"][0]));
  EXPECT_EQ(keys(mine["mean"]["magvit"]), (std::vector<std::string>{"psnr", "ssim"}));  // no LPIPS
  EXPECT_EQ(keys(mine["per_frame"]["magvit"]), keys(golden["per_frame"]["trained"]));

  core::CompareCommand bad = args;
  bad.entries = {{"original", fx.ckpt.string()}};  // the name of the originals' column
  EXPECT_EQ(compare(bad), 2);
  bad.entries = {{"a", (fx.dir.path() / "missing").string()}};
  EXPECT_EQ(compare(bad), 2);
  bad.entries = {{"a", fx.ckpt.string()}, {"a", vq_ckpt.string()}};
  EXPECT_EQ(compare(bad), 2);
}

// Frame t of a strip written by compare (frames left to right), as a PNG of its own.
fs::path cropFrame(const fs::path& strip_png, int t, int width, const fs::path& out) {
  const media::VideoFrames strip = media::ImageReader::read(strip_png.string());
  media::VideoFrames frame;
  frame.width = width;
  frame.height = strip.height;
  frame.count = 1;
  frame.rgb.resize(frame.frameBytes());
  const std::size_t row = static_cast<std::size_t>(width) * 3;
  for (int y = 0; y < strip.height; ++y) {
    std::copy_n(strip.rgb.data() + static_cast<std::size_t>(y) * strip.width * 3 + t * row, row,
                frame.rgb.data() + y * row);
  }
  media::writePng(out.string(), frame.width, frame.height, frame.rgb.data());
  return out;
}

nlohmann::json metricsCommand(const MetricsArgs& args) {
  ::testing::internal::CaptureStdout();
  const int code = computeMetrics(args);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0) << args.a << " " << args.b;
  return nlohmann::json::parse(out);
}

// compare on two tiny trained tokenizers (MAGVIT-v2 and VQGAN): the report's numbers are those the
// metrics command gives on the frames compare wrote (clip_<k>/<name>.png), frame by frame.
TEST(TokenCommands, CompareMatchesTheMetricsCommandOnTheWrittenFrames) {
  TempFolder dir;
  core::RunConfig magvit = tinyConfig();
  magvit.data.image_size = 32;
  magvit.train.max_steps = 8;
  magvit.train.warmup_steps = 0;
  magvit.train.lr = 3e-3;
  magvit.train.valid_every = 0;
  magvit.train.sample_every = 0;
  magvit.loss.adversarial_weight = 0;
  magvit.loss.perceptual_weight = 0;
  const core::RunConfig vq = asTinyVqgan(magvit);
  ASSERT_EQ(testing::train(magvit, dir.path() / "magvit").code, 0);
  ASSERT_EQ(testing::train(vq, dir.path() / "vqgan").code, 0);

  const std::string fixture = TB_SHARED_DIR "/fixtures/lpips";
  const bool with_lpips = fs::exists(fixture + "/alex_backbone.pth");
  core::CompareCommand args;
  args.entries = {{"magvit", (dir.path() / "magvit").string()},
                  {"vqgan", (dir.path() / "vqgan").string()}};
  args.out_dir = (dir.path() / "review").string();
  args.clips = 2;
  if (with_lpips) {
    args.lpips_backbone = fixture + "/alex_backbone.pth";
    args.lpips_lin = fixture + "/alex_lin.pth";
  }
  ASSERT_EQ(compare(args), 0);
  std::ifstream in(fs::path(args.out_dir) / "metrics.json");
  const auto report = nlohmann::json::parse(in);
  ASSERT_EQ(report["clips"].size(), 2u);
  for (const auto& clip : report["clips"]) {
    const int frames = clip["frames"].get<int>(), width = clip["width"].get<int>();
    ASSERT_EQ(frames, 5);
    ASSERT_EQ(width, 32);
    char name[32];
    std::snprintf(name, sizeof name, "clip_%03d", clip["clip"].get<int>());
    const fs::path strips = fs::path(args.out_dir) / name;
    for (const char* tokenizer : {"magvit", "vqgan"}) {
      double psnr = 0, ssim = 0, lpips = 0;
      for (int t = 0; t < frames; ++t) {
        MetricsArgs m;
        m.a = cropFrame(strips / "original.png", t, width, dir.path() / "a.png").string();
        m.b = cropFrame(strips / (std::string(tokenizer) + ".png"), t, width, dir.path() / "b.png")
                  .string();
        m.lpips_backbone = args.lpips_backbone;
        m.lpips_lin = args.lpips_lin;
        const auto scores = metricsCommand(m);
        psnr += scores["psnr"].get<double>() / frames;
        ssim += scores["ssim"].get<double>() / frames;
        if (with_lpips) lpips += scores["lpips"].get<double>() / frames;
      }
      const auto& reported = clip["metrics"][tokenizer];
      EXPECT_NEAR(reported["psnr"].get<double>(), psnr, 1e-4) << name << " " << tokenizer;
      EXPECT_NEAR(reported["ssim"].get<double>(), ssim, 1e-4) << name << " " << tokenizer;
      if (with_lpips) {
        EXPECT_NEAR(reported["lpips"].get<double>(), lpips, 1e-4) << name << " " << tokenizer;
      }
      // Trained for a few steps, both are better than noise and worse than perfect.
      EXPECT_GT(psnr, 8.0) << tokenizer;
      EXPECT_LT(psnr, 60.0) << tokenizer;
    }
  }
}

#endif
}  // namespace
}  // namespace tb::trainer::cli
