#include "core/compare_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace tb::core {
namespace {

// A compare report as the trainer writes it: the compare_demo run's metrics.json (two magvit2
// checkpoints, four clips), with LPIPS, a classic VQ reference and the per-frame means added.
std::string goldenDocument() {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/compare_report_v1.json",
                   std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(CompareReport, ReadsTheGoldenDocumentAndWritesItBackByteForByte) {
  const std::string golden = goldenDocument();
  ASSERT_FALSE(golden.empty());
  std::string error;
  const std::optional<CompareReport> report = parseCompareReport(golden, &error);
  ASSERT_TRUE(report) << error;
  ASSERT_EQ(report->tokenizers.size(), 3u);
  EXPECT_EQ(report->tokenizers[1].name, "trained");
  EXPECT_EQ(report->tokenizers[1].checkpoint, "/tmp/h3/a/checkpoints/step_200");
  EXPECT_EQ(report->tokenizers[1].weights, "ema.safetensors");
  EXPECT_EQ(report->tokenizers[1].model_kind, "magvit2");
  EXPECT_EQ(report->tokenizers[1].label, "");
  EXPECT_EQ(report->tokenizers[2].label, "classic VQ, 8 bits/token");
  ASSERT_EQ(report->clips.size(), 4u);
  const CompareClip& clip = report->clips[1];
  EXPECT_EQ(clip.index, 1);
  EXPECT_EQ(clip.source, "synthetic:389");
  EXPECT_EQ(clip.frames, 5);
  EXPECT_EQ(clip.width, 32);
  EXPECT_EQ(clip.height, 32);
  ASSERT_EQ(clip.scores.size(), 3u);
  EXPECT_DOUBLE_EQ(clip.scores[1].psnr, 13.221343257024392);
  EXPECT_DOUBLE_EQ(clip.scores[1].ssim, 0.3228426653742186);
  EXPECT_DOUBLE_EQ(clip.scores[1].lpips.value_or(-1.0), 0.2975);
  ASSERT_EQ(report->mean.size(), 3u);
  EXPECT_DOUBLE_EQ(report->mean[1].psnr, 14.688345939979605);
  ASSERT_EQ(report->per_frame.size(), 3u);
  EXPECT_EQ(report->per_frame[1].psnr, (std::vector<double>{12.5, 15.0, 15.25, 15.5, 15.2}));
  EXPECT_EQ(report->per_frame[0].ssim.size(), 5u);
  EXPECT_EQ(toJsonText(*report), golden);
}

TEST(CompareReport, OlderReportsReadAndNonFiniteScoresAreNull) {
  // A report before "version", "per_frame", LPIPS and the clips' sizes.
  const std::string old = R"({"tokenizers":[{"name":"a","checkpoint":"/c","weights":"w",
    "model_kind":"magvit2"}],"clips":[{"source":"x.mp4","metrics":{"a":{"psnr":20.5,"ssim":0.5}}}],
    "mean":{"a":{"psnr":20.5,"ssim":0.5}}})";
  std::string error;
  std::optional<CompareReport> report = parseCompareReport(old, &error);
  ASSERT_TRUE(report) << error;
  EXPECT_EQ(report->clips[0].index, 0);
  EXPECT_EQ(report->clips[0].frames, 0);
  EXPECT_FALSE(report->clips[0].scores[0].lpips);
  EXPECT_TRUE(report->per_frame.empty());

  // A perfect reconstruction's PSNR is infinite: written as null, read back as NaN.
  report->clips[0].scores[0].psnr = std::numeric_limits<double>::infinity();
  const std::string text = toJsonText(*report);
  EXPECT_NE(text.find("\"psnr\": null"), std::string::npos) << text;
  EXPECT_EQ(text.find("per_frame"), std::string::npos);
  EXPECT_EQ(text.find("lpips"), std::string::npos);
  const std::optional<CompareReport> again = parseCompareReport(text, &error);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(std::isnan(again->clips[0].scores[0].psnr));
  EXPECT_DOUBLE_EQ(again->clips[0].scores[0].ssim, 0.5);
}

TEST(CompareReport, BadDocumentsAreRefusedNamingTheField) {
  struct Case {
    std::string from, to, reason;
  };
  for (const Case& c :
       {Case{"\"version\": 1", "\"version\": 2", "version 2"},
        Case{"\"tokenizers\"", "\"tokenisers\"", "missing \"tokenizers\""},
        Case{"\"name\": \"trained\"", "\"name\": \"untrained\"", "two tokenizers are named"},
        Case{"\"name\": \"trained\"", "\"name\": 7", "\"name\" is not a string"},
        Case{"\"clips\"", "\"clip_list\"", "missing \"clips\""},
        Case{"\"frames\": 5", "\"frames\": \"5\"", "\"frames\" is not an integer"},
        Case{"\"psnr\": 10.610449326428206", "\"psnr\": \"10\"", "\"psnr\" is not a number"},
        Case{"\"mean\"", "\"means\"", "missing \"mean\""}}) {
    std::string text = goldenDocument();
    text.replace(text.find(c.from), c.from.size(), c.to);
    std::string error;
    EXPECT_FALSE(parseCompareReport(text, &error)) << c.to;
    EXPECT_NE(error.find(c.reason), std::string::npos) << error;
  }
  std::string error;
  EXPECT_FALSE(parseCompareReport("{\"tokenizers\": [], \"clips\": [], \"mean\": {}}", &error));
  EXPECT_NE(error.find("\"tokenizers\" is empty"), std::string::npos) << error;
  EXPECT_FALSE(parseCompareReport("{\"tokenizers\": [", &error));
  EXPECT_NE(error.find("compare report: invalid JSON"), std::string::npos) << error;
  // Scores for a tokenizer the list does not name are missing for one it names.
  std::string text = goldenDocument();
  text.replace(text.find("\"classic-vq\": {"), 12, "\"other-vq\"");
  EXPECT_FALSE(parseCompareReport(text, &error));
  EXPECT_NE(error.find("\"metrics\" has nothing for tokenizer \"classic-vq\""), std::string::npos)
      << error;
}

}  // namespace
}  // namespace tb::core
