// The YAML reader for Python projects' model configurations (core/yaml_subset.h).
#include "core/yaml_subset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tb::core {
namespace {

using Json = nlohmann::json;

// The layout of taming-transformers' configs/*.yaml (vqgan_imagenet_f16_16384's model.yaml).
constexpr const char* kTaming = R"(model:
  base_learning_rate: 4.5e-06
  target: taming.models.vqgan.VQModel
  params:
    embed_dim: 256
    n_embed: 16384
    monitor: val/rec_loss
    ddconfig:
      double_z: False
      z_channels: 256
      resolution: 256
      in_channels: 3
      out_ch: 3
      ch: 128
      ch_mult: [ 1,1,2,2,4]  # num_down = len(ch_mult)-1
      num_res_blocks: 2
      attn_resolutions: [16]
      dropout: 0.0

    lossconfig:
      target: taming.modules.losses.vqperceptual.VQLPIPSWithDiscriminator
      params:
        disc_conditional: False
        disc_start: 0
        codebook_weight: 1.0

data:
  target: main.DataModuleFromConfig
  params:
    batch_size: 12
    train:
      target: taming.data.imagenet.ImageNetTrain
      params:
        config:
          size: 256
lightning:
  callbacks:
  - name: 'it''s'
    every: 1e-3
  - "quoted # not a comment"
  - {a: 1, b: [x, "y"]}
  -
    nested: ~
)";

TEST(YamlSubset, ReadsATamingConfig) {
  const Json j = parseYamlSubset(kTaming, "model.yaml");
  const Json& params = j["model"]["params"];
  EXPECT_EQ(params["embed_dim"], 256);
  EXPECT_TRUE(params["embed_dim"].is_number_integer());
  EXPECT_EQ(params["monitor"], "val/rec_loss");
  const Json& dd = params["ddconfig"];
  EXPECT_EQ(dd["double_z"], false);
  EXPECT_EQ(dd["ch_mult"], Json({1, 1, 2, 2, 4}));
  EXPECT_EQ(dd["attn_resolutions"], Json({16}));
  EXPECT_DOUBLE_EQ(dd["dropout"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["model"]["base_learning_rate"].get<double>(), 4.5e-6);
  EXPECT_EQ(params["lossconfig"]["params"]["disc_conditional"], false);
  EXPECT_EQ(j["data"]["params"]["train"]["params"]["config"]["size"], 256);
  const Json& callbacks = j["lightning"]["callbacks"];
  ASSERT_EQ(callbacks.size(), 4u);
  EXPECT_EQ(callbacks[0]["name"], "it's");
  EXPECT_DOUBLE_EQ(callbacks[0]["every"].get<double>(), 1e-3);
  EXPECT_EQ(callbacks[1], "quoted # not a comment");
  EXPECT_EQ(callbacks[2], Json({{"a", 1}, {"b", {"x", "y"}}}));
  EXPECT_TRUE(callbacks[3]["nested"].is_null());
}

TEST(YamlSubset, ReadsTheFixtureConfig) {
  const auto file = std::filesystem::path(TB_SHARED_DIR) / "fixtures/public_vq/taming_model.yaml";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent";
  const Json j = readYamlSubsetFile(file);
  EXPECT_EQ(j["model"]["params"]["ddconfig"]["ch_mult"], Json({2, 1}));
  EXPECT_EQ(j["model"]["params"]["n_embed"], 64);
}

TEST(YamlSubset, NamesTheLineOfWhatItRefuses) {
  auto message = [](const std::string& text) {
    try {
      parseYamlSubset(text, "c.yaml");
    } catch (const YamlError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(message("a: 1\nb: &x 2\n"), "c.yaml:2: anchors and aliases are not read (\"&x 2\")");
  EXPECT_EQ(message("a:\n  b: |\n    text\n").rfind("c.yaml:2: block scalars", 0), 0u);
  EXPECT_EQ(message("a: 1\na: 2\n"), "c.yaml:2: the key \"a\" is given twice");
  EXPECT_EQ(message("a: [1, 2\n").rfind("c.yaml:1: no closing ']'", 0), 0u);
  EXPECT_EQ(message("a:\n\tb: 1\n"), "c.yaml:2: a tab in the indentation");
  EXPECT_EQ(message("a: 1\nplain words\n"),
            "c.yaml:2: expected \"key: value\", got \"plain words\"");
  EXPECT_EQ(message("a: 1\n---\nb: 2\n").rfind("c.yaml:2: a second document", 0), 0u);
  EXPECT_EQ(message("a:\n    b: 1\n  c: 2\n").rfind("c.yaml:3: indentation", 0), 0u);
  EXPECT_THROW(readYamlSubsetFile("/nonexistent/model.yaml"), YamlError);
}

TEST(YamlSubset, ResolvesScalarsAsPyYamlDoes) {
  const Json j = parseYamlSubset(
      "t: yes\nf: Off\nn: ~\ni: -12\nx: 0.5\ne: 1e-6\ns: 1.2.3\nq: \"a\\tb\"\nk: key:value\n", "s");
  EXPECT_EQ(j["t"], true);
  EXPECT_EQ(j["f"], false);
  EXPECT_TRUE(j["n"].is_null());
  EXPECT_EQ(j["i"], -12);
  EXPECT_DOUBLE_EQ(j["x"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["e"].get<double>(), 1e-6);
  EXPECT_EQ(j["s"], "1.2.3");
  EXPECT_EQ(j["q"], "a\tb");
  EXPECT_EQ(j["k"], "key:value");
  EXPECT_TRUE(parseYamlSubset("# only a comment\n", "s").is_null());
}

}  // namespace
}  // namespace tb::core
