// MAGVIT-v2 / VQGAN tokenizers, discriminators, presets and the model CLI commands.
#include "core/config_io.h"
#include "core/presets.h"
#include "trainer/cli/model_commands.h"
#include "trainer/models/discriminator.h"
#include "trainer/models/magvit_blocks.h"
#include "trainer/models/magvit_tokenizer.h"
#include "trainer/models/tokenizer.h"
#include "trainer/models/vqgan_tokenizer.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tb::trainer {
namespace {

core::ModelConfig tinyMagvit(std::vector<core::LayerSpec> layers) {
  core::ModelConfig m;
  m.kind = core::ModelKind::Magvit2;
  m.init_dim = 8;
  m.max_dim = 16;
  m.layers = std::move(layers);
  m.input_conv_kernel = {3, 3, 3};
  m.attn_dim_head = 8;
  m.attn_heads = 2;
  m.attn_num_mem_kv = 2;
  m.linear_attn_dim_head = 4;
  m.linear_attn_heads = 2;
  m.ff_mult = 2;
  m.dim_cond = 4;
  m.quantizer.codebook_size = 16;
  return m;
}

core::DataConfig data(int image, int frames) {
  core::DataConfig d;
  d.image_size = image;
  d.num_frames = frames;
  return d;
}

bool isCondLayer(const std::string& name) { return name.rfind("cond_", 0) == 0; }

// d recon[:, :, t] / d input[:, :, s] must be exactly zero for every s > t. Without time
// compression output frame t must also depend on input frame t; with it (strict causality makes
// the decoder predict frames, see TimeDownsample2x) the last output frame must depend on the input.
void expectCausal(Tokenizer& tok, std::int64_t frames, std::int64_t image, bool cond,
                  const std::string& what, bool compresses_time = false) {
  torch::manual_seed(1);
  tok.train();
  auto x = torch::randn({1, 3, frames, image, image}, torch::requires_grad());
  const auto c = cond ? torch::randn({1, 4}) : torch::Tensor();
  const auto recon = tok.forward(x, c).recon;
  ASSERT_EQ(recon.size(2), frames) << what;
  for (std::int64_t t = 0; t < frames; ++t) {
    const auto g =
        torch::autograd::grad({recon.select(2, t).sum()}, {x}, {}, /*retain_graph=*/true)[0];
    if (t + 1 < frames) {
      EXPECT_EQ(g.slice(2, t + 1).abs().max().item<float>(), 0.0f)
          << what << ": output frame " << t << " sees the future";
    }
    if (!compresses_time) {
      EXPECT_GT(g.select(2, t).abs().max().item<float>(), 0.0f)
          << what << ": output frame " << t << " ignores its own frame";
    } else if (t + 1 == frames) {
      EXPECT_GT(g.abs().max().item<float>(), 0.0f)
          << what << ": the last output frame ignores the input";
    }
  }
}

TEST(MagvitLayers, EveryLayerTypeKeepsShapesAndReconstructsInputShape) {
  torch::manual_seed(0);
  const std::vector<core::LayerSpec> specs = {{"residual", {}},
                                              {"consecutive_residual", 2},
                                              {"compress_space", {}},
                                              {"compress_space", 12},
                                              {"compress_time", {}},
                                              {"attend_space", {}},
                                              {"linear_attend_space", {}},
                                              {"attend_time", {}},
                                              {"gateloop_time", {}},
                                              {"cond_residual", {}},
                                              {"cond_attend_space", {}},
                                              {"cond_linear_attend_space", {}},
                                              {"cond_attend_time", {}}};
  for (const auto& spec : specs) {
    SCOPED_TRACE(spec.name);
    auto tok = makeTokenizer(tinyMagvit({spec}), data(16, 5));
    auto* magvit = dynamic_cast<MagvitTokenizerImpl*>(tok.get());
    ASSERT_NE(magvit, nullptr);
    const auto x = torch::rand({2, 3, 5, 16, 16}) * 2 - 1;
    const auto c = isCondLayer(spec.name) ? torch::randn({2, 4}) : torch::Tensor();
    const auto latent = tok->encode(x, c);
    const std::int64_t dim_out = spec.name == "compress_space"  ? (spec.arg ? 12 : 16)
                                 : spec.name == "compress_time" ? 16
                                                                : 8;
    const std::int64_t side = spec.name == "compress_space" ? 8 : 16;
    const std::int64_t t = spec.name == "compress_time" ? 3 : 5;
    EXPECT_EQ(latent.sizes(), (std::vector<std::int64_t>{2, dim_out, t, side, side}));
    const auto out = tok->forward(x, c);
    EXPECT_EQ(out.recon.sizes(), x.sizes());
    EXPECT_EQ(out.indices.sizes(), (std::vector<std::int64_t>{2, t, side, side}));
    EXPECT_EQ(tok->tokenGrid(5, 16), (std::array<std::int64_t, 3>{t, side, side}));
  }
}

TEST(MagvitLayers, CondLayersNeedTheConditioningVector) {
  auto tok = makeTokenizer(tinyMagvit({{"cond_residual", {}}}), data(16, 1));
  EXPECT_THROW(tok->encode(torch::zeros({1, 3, 1, 16, 16})), c10::Error);
  auto m = tinyMagvit({{"cond_attend_time", {}}});
  m.dim_cond = 0;
  try {
    makeTokenizer(m, data(16, 1));
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("model.layers[0]"), std::string::npos) << e.what();
  }
}

// The squeeze-excite gate works on the video as it is; it must equal magvit2-pytorch's formula on
// the batch of frames ('b c t h w -> (b t) c h w'): softmax(to_k(x)) pooling by a matrix product.
TEST(MagvitLayers, SqueezeExciteEqualsTheFrameBatchFormula) {
  torch::manual_seed(3);
  SqueezeExcite se(12);
  {
    torch::NoGradGuard no_grad;  // non-zero gates (net_out starts at zero weights)
    se->net_out->weight.normal_(0.0, 0.5);
    se->net_out->bias.normal_(0.0, 0.5);
  }
  const torch::Tensor video = torch::randn({2, 12, 3, 5, 6});
  const torch::Tensor frames = video.permute({0, 2, 1, 3, 4}).reshape({6, 12, 5, 6});
  const torch::Tensor context = torch::softmax(se->to_k(frames).flatten(2), -1);  // [6, 1, 30]
  const torch::Tensor pooled = torch::matmul(frames.flatten(2), context.transpose(1, 2));
  const torch::Tensor gates = torch::sigmoid(
      se->net_out(torch::leaky_relu(se->net_in(pooled.unsqueeze(-1)), 0.1)));  // [6, 12, 1, 1]
  const torch::Tensor expected =
      (gates * frames).reshape({2, 3, 12, 5, 6}).permute({0, 2, 1, 3, 4});
  EXPECT_TRUE(torch::allclose(se->forward(video), expected, 1e-5, 1e-6));
  EXPECT_TRUE(torch::allclose(se->forward(frames), gates * frames, 1e-5, 1e-6)) << "images";
}

TEST(MagvitLayers, ResidualGateBiasSetsHowOpenTheResidualUnitsStart) {
  for (const double bias : {-10.0, 0.0}) {
    core::ModelConfig m =
        tinyMagvit({{"residual", {}}, {"compress_space", {}}, {"consecutive_residual", 2}});
    m.residual_gate_bias = bias;
    const auto tokenizer = makeTokenizer(m, core::DataConfig{});
    int gates = 0;
    for (const auto& p : tokenizer->named_parameters()) {
      if (p.key().find("gate.net_out.bias") == std::string::npos) continue;
      ++gates;
      EXPECT_TRUE(torch::all(p.value() == bias).item<bool>()) << p.key();
    }
    EXPECT_EQ(gates, 6) << "3 residual units in the encoder, 3 in the decoder";
  }
  // Half open: a unit's output is x + 0.5 x its branch.
  torch::manual_seed(4);
  ResidualUnit unit(8, 3, TimePadding::Zeros, 0.0);
  const torch::Tensor x = torch::randn({1, 8, 3, 4, 4});
  const torch::Tensor branch = torch::elu(unit->conv_out(torch::elu(unit->conv(x))));
  EXPECT_TRUE(torch::allclose(unit->forward(x, {}), x + 0.5 * branch, 1e-5, 1e-6));
}

TEST(MagvitCausality, EveryTemporalLayerIsCausal) {
  for (const std::string name :
       {"residual", "cond_residual", "attend_time", "cond_attend_time", "gateloop_time"}) {
    auto tok = makeTokenizer(tinyMagvit({{name, {}}}), data(8, 4));
    expectCausal(*tok, 4, 8, isCondLayer(name), name);
  }
  auto tok = makeTokenizer(tinyMagvit({{"compress_time", {}}}), data(8, 5));
  expectCausal(*tok, 5, 8, false, "compress_time", true);
}

TEST(MagvitCausality, WholeTokenizerIsCausalWithAndWithoutSeparateFirstFrame) {
  for (bool separate : {false, true}) {
    auto m = tinyMagvit({{"residual", {}},
                         {"compress_space", {}},
                         {"compress_time", {}},
                         {"attend_time", {}},
                         {"compress_time", {}},
                         {"gateloop_time", {}},
                         {"attend_space", {}}});
    m.separate_first_frame_encoding = separate;
    auto tok = makeTokenizer(m, data(8, 5));
    EXPECT_EQ(tok->tokenGrid(5, 8), (std::array<std::int64_t, 3>{2, 4, 4}));
    expectCausal(*tok, 5, 8, false, separate ? "separate first frame" : "joint first frame", true);
  }
}

// model.time_padding "replicate": still causal with every temporal layer that pads time; a still
// video then encodes to the same latent at every time step, the first included (with zero
// padding the first latent sees a cut from black and differs).
TEST(MagvitCausality, ReplicatedTimePaddingIsCausalAndMakesTheFirstFrameLikeTheOthers) {
  for (const std::string name : {"residual", "cond_residual", "compress_time"}) {
    auto m = tinyMagvit({{name, {}}});
    m.time_padding = core::TimePadding::Replicate;
    auto tok = makeTokenizer(m, data(8, 5));
    expectCausal(*tok, 5, 8, isCondLayer(name), name + " (replicate)", name == "compress_time");
  }
  torch::manual_seed(3);
  const auto still = (torch::rand({1, 3, 1, 8, 8}) * 2 - 1).expand({1, 3, 9, 8, 8}).contiguous();
  auto spread = [&](const std::string& padding) {
    auto m = tinyMagvit(
        {{"residual", {}}, {"compress_time", {}}, {"residual", {}}, {"compress_time", {}}});
    m.time_padding = core::parseChoiceOrThrow<core::TimePadding>("padding", padding);
    torch::manual_seed(4);
    auto tok = makeTokenizer(m, data(8, 9));
    torch::NoGradGuard no_grad;
    const auto latent = tok->encode(still);  // [1, C, 3, 8, 8]
    EXPECT_EQ(latent.size(2), 3);
    return (latent - latent.select(2, 2).unsqueeze(2)).abs().max().item<float>();
  };
  EXPECT_LT(spread("replicate"), 1e-5f);
  EXPECT_GT(spread("zeros"), 1e-2f);
}

// model.time_alignment: with magvit2-pytorch's lagged time compression the token that decodes
// frame 2 (frames 1 and 2 come from token 1) never sees frame 2, which is then predicted, not
// coded; aligned in blocks every output frame sees its own input frame, and none sees a frame
// of a later token (frames (k-1) f + 1 .. k f form token k, f the time compression).
TEST(MagvitCausality, BlockAlignedTimeCompressionCodesEveryFrameOfItsToken) {
  auto ownAndLaterGradients = [](const std::string& alignment, int compressions, int frames) {
    std::vector<core::LayerSpec> layers = {{"residual", {}}};
    for (int i = 0; i < compressions; ++i) layers.push_back({"compress_time", {}});
    layers.push_back({"residual", {}});
    auto m = tinyMagvit(layers);
    m.time_alignment = core::parseChoiceOrThrow<core::TimeAlignment>("alignment", alignment);
    m.time_padding = core::TimePadding::Replicate;
    torch::manual_seed(5);
    auto tok = makeTokenizer(m, data(8, frames));
    tok->train();
    auto x = torch::randn({1, 3, frames, 8, 8}, torch::requires_grad());
    const auto recon = tok->forward(x).recon;
    const std::int64_t f = std::int64_t{1} << compressions;
    std::vector<std::pair<float, float>> out;  // per output frame: own, beyond its token
    for (std::int64_t t = 0; t < frames; ++t) {
      const auto g = torch::autograd::grad({recon.select(2, t).sum()}, {x}, {}, true)[0];
      const std::int64_t last = t == 0 ? 0 : ((t - 1) / f + 1) * f;  // its token's last frame
      out.emplace_back(g.select(2, t).abs().max().item<float>(),
                       last + 1 < frames ? g.slice(2, last + 1).abs().max().item<float>() : 0.0f);
    }
    return out;
  };
  for (const int compressions : {1, 2}) {
    const int frames = 1 + 2 * (1 << compressions);
    const auto blocks = ownAndLaterGradients("blocks", compressions, frames);
    for (int t = 0; t < frames; ++t) {
      EXPECT_GT(blocks[t].first, 0.0f) << compressions << " compressions: frame " << t;
      EXPECT_EQ(blocks[t].second, 0.0f) << compressions << " compressions: frame " << t;
    }
  }
  const auto lagged = ownAndLaterGradients("lagged", 1, 5);
  EXPECT_GT(lagged[1].first, 0.0f);
  EXPECT_EQ(lagged[2].first, 0.0f) << "lagged: frame 2 is predicted from frames 0 and 1";
}

TEST(MagvitTokenizer, ImagesAreOneFrameVideosAndIndicesDecode) {
  torch::manual_seed(0);
  auto tok = makeTokenizer(
      tinyMagvit({{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}}), data(16, 1));
  tok->eval();
  const auto image = torch::rand({2, 3, 16, 16}) * 2 - 1;
  const auto out = tok->forward(image);
  EXPECT_EQ(out.recon.sizes(), image.sizes());
  const auto indices = tok->tokenize(image);
  EXPECT_EQ(indices.sizes(), (std::vector<std::int64_t>{2, 1, 8, 8}));
  EXPECT_TRUE(torch::equal(indices, out.indices));
  const auto decoded = tok->decodeFromIndices(indices);
  EXPECT_TRUE(torch::allclose(decoded.squeeze(2), out.recon, 1e-5, 1e-5));
  std::vector<std::string> names;
  for (const auto& [n, v] : out.losses) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "recon_l1", "recon_mse", "quantizer", "quantizer/per_sample_entropy",
                       "quantizer/codebook_entropy", "quantizer/commitment"}));
}

TEST(MagvitTokenizer, ReadmePresetMatchesReferenceParameterCountAndTokenGrid) {
  const auto load = core::loadPreset("magvit2-readme");
  ASSERT_TRUE(load.ok());
  auto tok = makeTokenizer(load.config.model, load.config.data);
  const auto s = tok->stats(17, 128);
  // magvit2-pytorch's VideoTokenizer for its README configuration, counted there: exactly.
  EXPECT_EQ(s.tokenizerParams(), 117770995);
  EXPECT_EQ(s.tokenizerParams(), countParameters(*tok));
  EXPECT_EQ(s.token_grid, (std::array<std::int64_t, 3>{5, 16, 16}));
  EXPECT_GT(s.forward_flops, 1e11);
}

TEST(Discriminators, FrameDiscriminatorMatchesReferenceCountAtReferenceSettings) {
  // magvit2-pytorch builds Discriminator(dim = 512 (the tokenizer's last dim), image_size = 128)
  // with attention after every block.
  FrameDiscriminator d(
      FrameDiscriminatorOptions(512, 128).attn_resolutions({128, 64, 32, 16, 8, 4}));
  EXPECT_EQ(countParameters(*d), 49079293);
}

TEST(Discriminators, ShapesOfEveryType) {
  torch::manual_seed(0);
  auto m = tinyMagvit({{"residual", {}}});
  m.discriminator.dim = 4;
  m.discriminator.max_dim = 16;
  for (const std::string type : {"frame", "patchgan", "video"}) {
    SCOPED_TRACE(type);
    m.discriminator.type = core::parseChoiceOrThrow<core::DiscriminatorType>("type", type);
    m.discriminator.patchgan_layers = 2;
    auto d = makeDiscriminator(m, data(32, 5));
    const auto x = d->takesVideo() ? torch::randn({2, 3, 5, 32, 32}) : torch::randn({2, 3, 32, 32});
    const auto logits = d->forward(x);
    if (type == "patchgan") {
      EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 1, 6, 6}));
    } else {
      EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2}));
    }
    EXPECT_EQ(d->takesVideo(), type == "video");
  }
  core::ModelConfig taming;
  taming.discriminator.type = core::DiscriminatorType::PatchGan;
  taming.discriminator.dim = 64;
  taming.discriminator.patchgan_layers = 3;
  // taming NLayerDiscriminator(3, 64, 3): 3136 + 131328 + 524800 + 2098176 + 8193
  EXPECT_EQ(countParameters(*makeDiscriminator(taming, data(256, 1))), 2765633);
}

TEST(Vqgan, TinyVqganShapesAndTokens) {
  torch::manual_seed(0);
  core::ModelConfig m;
  m.kind = core::ModelKind::Vqgan;
  m.vqgan.base_channels = 8;
  m.vqgan.channel_mult = {1, 2, 2};
  m.vqgan.num_res_blocks = 1;
  m.vqgan.attn_resolutions = {8};
  m.vqgan.z_channels = 8;
  m.quantizer.type = core::QuantizerType::Vq;
  m.quantizer.codebook_size = 32;
  m.quantizer.codebook_dim = 4;
  auto tok = makeTokenizer(m, data(16, 2));
  const auto x = torch::rand({1, 3, 2, 16, 16}) * 2 - 1;
  const auto out = tok->forward(x);
  EXPECT_EQ(out.recon.sizes(), x.sizes());
  EXPECT_EQ(out.indices.sizes(), (std::vector<std::int64_t>{1, 2, 4, 4}));
  EXPECT_EQ(tok->encode(x).sizes(), (std::vector<std::int64_t>{1, 4, 2, 4, 4}));
  const auto s = tok->stats(2, 16);
  EXPECT_EQ(s.tokenizerParams(), countParameters(*tok));
  EXPECT_GT(s.forward_flops, 0);
}

TEST(Presets, EveryPresetBuildsAndSmallOnesRunAtReducedSize) {
  for (const auto& p : core::presets()) {
    SCOPED_TRACE(p.name);
    const auto load = core::loadPreset(p.name);
    ASSERT_TRUE(load.ok());
    auto cfg = load.config;
    const auto info = cli::modelInfoJson(cfg);
    EXPECT_GT(info["params"]["tokenizer"].get<std::int64_t>(), 0);
    EXPECT_GT(info["compression_ratio"].get<double>(), 1.0);
    const std::int64_t params = info["params"]["tokenizer"].get<std::int64_t>();
    if (params > 20'000'000) continue;  // large presets: construct and count only
    torch::manual_seed(0);
    const bool vqgan = cfg.model.kind == core::ModelKind::Vqgan;
    const std::int64_t f =
        vqgan ? (std::int64_t{1} << (cfg.model.vqgan.channel_mult.size() - 1))
              : (std::int64_t{1} << core::countLayers(cfg.model.layers, "compress_space"));
    const std::int64_t tf =
        vqgan ? 1 : (std::int64_t{1} << core::countLayers(cfg.model.layers, "compress_time"));
    cfg.data.image_size = static_cast<int>(std::max<std::int64_t>(f, 16));
    cfg.data.num_frames = static_cast<int>(1 + tf);
    auto tok = makeTokenizer(cfg.model, cfg.data);
    const auto x = torch::rand(
        {1, cfg.model.channels, cfg.data.num_frames, cfg.data.image_size, cfg.data.image_size});
    EXPECT_EQ(tok->forward(x).recon.sizes(), x.sizes());
  }
}

TEST(ModelCommands, ModelInfoFieldsAndInvalidConfigExitCode) {
  core::RunConfig cfg;
  cfg.model = tinyMagvit({{"residual", {}}, {"compress_space", {}}, {"compress_time", {}}});
  cfg.data = data(16, 5);
  const auto j = cli::modelInfoJson(cfg);
  EXPECT_EQ(j["input_shape"], (std::vector<std::int64_t>{3, 5, 16, 16}));
  EXPECT_EQ(j["token_grid"], (std::vector<std::int64_t>{3, 8, 8}));
  EXPECT_EQ(j["tokens_per_clip"].get<std::int64_t>(), 192);
  EXPECT_DOUBLE_EQ(j["bits_per_token"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["compression_ratio"].get<double>(), 3.0 * 5 * 16 * 16 * 8 / (192 * 4.0));
  EXPECT_EQ(j["params"]["tokenizer"].get<std::int64_t>(),
            j["params"]["encoder"].get<std::int64_t>() +
                j["params"]["decoder"].get<std::int64_t>() +
                j["params"]["quantizer"].get<std::int64_t>());
  EXPECT_GT(j["peak_training_memory_bytes"].get<double>(),
            16.0 * j["params"]["tokenizer"].get<double>());

  const auto bad = std::filesystem::temp_directory_path() / "tb_models_bad_config.json";
  std::ofstream(bad) << R"({"train": {"batch_size": 0}})";
  EXPECT_EQ(cli::modelInfo(bad.string(), ""), 2);
  std::filesystem::remove(bad);
  EXPECT_EQ(cli::modelInfo("", "no-such-preset"), 2);
}

TEST(ModelCommands, InitWritesLoadableCheckpointFolder) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tb_models_init_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  core::RunConfig cfg;
  cfg.model = tinyMagvit({{"residual", {}}, {"compress_space", {}}});
  cfg.model.discriminator.dim = 4;
  cfg.data = data(16, 1);
  const auto config_file = std::filesystem::temp_directory_path() /
                           ("tb_models_init_" + std::to_string(::getpid()) + ".json");
  std::ofstream(config_file) << core::toJsonText(cfg);
  ASSERT_EQ(cli::initCheckpoint(config_file.string(), "", dir), 0);
  EXPECT_TRUE(std::filesystem::exists(dir / "config.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "discriminator.safetensors"));
  auto tok = makeTokenizer(cfg.model, cfg.data);
  weights::loadStateDict(*tok, dir / "model.safetensors");  // strict: every name and shape matches
  torch::manual_seed(static_cast<std::uint64_t>(cfg.train.seed));
  auto again = makeTokenizer(cfg.model, cfg.data);
  const auto a = weights::stateDict(*tok), b = weights::stateDict(*again);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  EXPECT_EQ(cli::initCheckpoint(config_file.string(), "", dir), 1);  // refuses to overwrite
  std::filesystem::remove_all(dir);
  std::filesystem::remove(config_file);
}

}  // namespace
}  // namespace tb::trainer
