#include "core/metric_panels.h"

#include "core/metric_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tb::core {
namespace {

TEST(MetricPanels, EveryNamedMetricHasAPanelOfItsOwnKind) {
  EXPECT_STREQ(metricPanelOf(metric::kTrainLoss).id, "loss");
  EXPECT_STREQ(metricPanelOf(metric::kTrainReconLoss).id, "loss");
  EXPECT_STREQ(metricPanelOf(metric::kValidReconLoss).id, "loss");
  EXPECT_STREQ(metricPanelOf(metric::kTrainLr).id, "lr");
  EXPECT_STREQ(metricPanelOf(metric::kValidPsnr).id, "psnr");
  EXPECT_STREQ(metricPanelOf(metric::kValidSsim).id, "quality");
  EXPECT_STREQ(metricPanelOf(metric::kValidLpips).id, "quality");
  EXPECT_STREQ(metricPanelOf(metric::kValidCodebookUsage).id, "usage");
  EXPECT_STREQ(metricPanelOf(metric::kValidPerplexity).id, "perplexity");
  EXPECT_STREQ(metricPanelOf(metric::kPerfItPerS).id, "throughput");
  EXPECT_STREQ(metricPanelOf(metric::kPerfStepS).id, "steptime");
  EXPECT_STREQ(metricPanelOf(metric::kPerfDataWaitS).id, "steptime");
  EXPECT_STREQ(metricPanelOf(metric::kPerfDataWaitFraction).id, "datawait");
  EXPECT_STREQ(metricPanelOf(metric::kDataSkippedFiles).id, "data");
}

TEST(MetricPanels, PatternsMatchRunsOfCharactersFirstPanelWins) {
  EXPECT_STREQ(metricPanelOf("train/discr_grad_norm").id, "grad");
  EXPECT_STREQ(metricPanelOf("train/quantizer/commitment").id, "quantizer");
  EXPECT_STREQ(metricPanelOf("train/lecam_reg").id, "gan");
  EXPECT_STREQ(metricPanelOf("valid/fvd").id, "valid");
  EXPECT_STREQ(metricPanelOf("custom").id, "other");
  EXPECT_STREQ(metricPanelOf("").id, "other");
  EXPECT_TRUE(metricPatternMatches("train/*_lr", "train/discr_lr"));
  EXPECT_FALSE(metricPatternMatches("train/*_lr", "train/lr"));
  EXPECT_TRUE(metricPatternMatches("a*b*c", "a/x/b/y/c"));
  EXPECT_FALSE(metricPatternMatches("a*b*c", "a/x/c/y/b"));
}

TEST(MetricPanels, IdsAreUniqueAndTheLastPanelTakesAnything) {
  std::set<std::string> ids;
  for (const MetricPanel& panel : metricPanels()) {
    EXPECT_TRUE(ids.insert(panel.id).second) << panel.id;
    EXPECT_FALSE(panel.patterns.empty()) << panel.id;
  }
  EXPECT_STREQ(metricPanels().back().id, "other");
  EXPECT_EQ(std::string(metricPanels().back().patterns.front()), "*");
}

}  // namespace
}  // namespace tb::core
