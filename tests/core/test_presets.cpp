#include "core/presets.h"

#include <gtest/gtest.h>

#include <vector>

namespace tb::core {
namespace {

TEST(Presets, EveryPresetIsValidAndRoundTrips) {
  const auto all = presets();
  ASSERT_GE(all.size(), 6u);
  EXPECT_EQ(all.front().name, "demo");
  for (const auto& p : all) {
    SCOPED_TRACE(p.name);
    EXPECT_FALSE(p.description.empty());
    ConfigLoad load = loadPreset(p.name);
    ASSERT_TRUE(load.ok()) << load.errors.front().toString();
    ConfigLoad again = parseRunConfig(std::string_view(toJsonText(load.config)));
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(changedKeys(load.config, again.config).empty());
  }
}

TEST(Presets, RequiredPresetsExist) {
  for (const char* name : {"demo", "quick-start", "magvit2-small", "magvit2-readme", "vqgan-f8",
                           "vqgan-f16", "bench-small"}) {
    EXPECT_TRUE(loadPreset(name).ok()) << name;
  }
}

// quick-start trains bench-small's tokenizer (the architecture issue 10's figures are for) on
// its 17-frame 64x64 clips, with FSQ at about bench-small's bits and the training settings
// measured to learn fast (docs/learning.md), the GAN available later in the same run.
TEST(Presets, QuickStartTrainsTheBenchSmallTokenizer) {
  const RunConfig q = loadPreset("quick-start").config;
  const RunConfig b = loadPreset("bench-small").config;
  EXPECT_EQ(q.model.kind, b.model.kind);
  EXPECT_EQ(q.model.init_dim, b.model.init_dim);
  EXPECT_EQ(q.model.max_dim, b.model.max_dim);
  EXPECT_EQ(q.model.layers, b.model.layers);
  EXPECT_EQ(q.model.quantizer.type, QuantizerType::Fsq);
  EXPECT_EQ(q.model.quantizer.fsq_levels, (std::vector<int>{8, 5, 5, 5}));
  EXPECT_EQ(q.model.quantizer.codebook_size, 1000);  // 9.97 bits a token; bench-small's 10
  EXPECT_EQ(q.data.image_size, 64);
  EXPECT_EQ(q.data.num_frames, 17);
  EXPECT_EQ(q.data.train_crop, 32);  // trains on crops of the clips; validates on whole ones
  EXPECT_EQ(q.data.train_frames, 9);
  EXPECT_EQ(q.train.batch_size, 8);
  EXPECT_EQ(q.model.time_padding, TimePadding::Replicate);
  EXPECT_GT(q.loss.adversarial_weight, 0.0);
  EXPECT_GT(q.loss.discr_start_step, 1000);
  // bf16 where the hardware computes it: 1.8x the steps and no loss of quality on this project's
  // CPU (docs/learning.md, bf16 against fp32).
  EXPECT_EQ(q.train.precision, Precision::Auto);
}

TEST(Presets, Magvit2ReadmeMatchesTheReadmeTokenizer) {
  const RunConfig c = loadPreset("magvit2-readme").config;
  EXPECT_EQ(c.data.image_size, 128);
  EXPECT_EQ(c.model.init_dim, 64);
  EXPECT_EQ(c.model.max_dim, 512);
  EXPECT_EQ(c.model.quantizer.codebook_size, 1024);
  const std::vector<LayerSpec> expected = {{"residual", {}},
                                           {"compress_space", {}},
                                           {"consecutive_residual", 2},
                                           {"compress_space", {}},
                                           {"consecutive_residual", 2},
                                           {"linear_attend_space", {}},
                                           {"compress_space", {}},
                                           {"consecutive_residual", 2},
                                           {"attend_space", {}},
                                           {"compress_time", {}},
                                           {"consecutive_residual", 2},
                                           {"compress_time", {}},
                                           {"consecutive_residual", 2},
                                           {"attend_time", {}}};
  EXPECT_EQ(c.model.layers, expected);
  EXPECT_EQ(c.train.batch_size, 4);
  EXPECT_EQ(c.train.grad_accum, 8);
  EXPECT_DOUBLE_EQ(c.train.lr, 2e-5);
}

TEST(Presets, BenchSmallIsTheReferenceBenchmarkShape) {
  const RunConfig c = loadPreset("bench-small").config;
  EXPECT_EQ(c.data.image_size, 64);
  EXPECT_EQ(c.data.num_frames, 17);
  EXPECT_EQ(c.model.init_dim, 32);
  EXPECT_EQ(c.model.max_dim, 128);
  EXPECT_EQ(c.loss.discr_start_step, 0);
  EXPECT_GT(c.loss.perceptual_weight, 0);
  EXPECT_EQ(c.model.layers.size(), 5u);
}

TEST(Presets, VqganPresetsDownsampleBy8And16) {
  EXPECT_EQ(loadPreset("vqgan-f8").config.model.vqgan.channel_mult.size(), 4u);
  EXPECT_EQ(loadPreset("vqgan-f16").config.model.vqgan.channel_mult.size(), 5u);
  EXPECT_EQ(loadPreset("vqgan-f8").config.model.kind, ModelKind::Vqgan);
}

TEST(Presets, UnknownNameSuggestsTheClosest) {
  ConfigLoad load = loadPreset("magvit2-smal");
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0].toString(),
            "preset: unknown preset \"magvit2-smal\" (did you mean \"magvit2-small\"?)");
  EXPECT_TRUE(presetOverrides("nope").is_null());
}

}  // namespace
}  // namespace tb::core
