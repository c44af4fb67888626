// taming-transformers and LlamaGen VQ checkpoints imported, against ../shared/fixtures/public_vq
// (what the reference code computed from three images; tolerances from its README): the indices
// exactly, prequant / quant / decode / decode_code / forward within the README's bounds, and the
// refusals of truncated, damaged, legacy-format files and of a configuration that does not fit.
#include "core/checkpoint_files.h"
#include "core/safetensors.h"
#include "test_support.h"
#include "trainer/cli/import_command.h"
#include "trainer/cli/token_commands.h"
#include "trainer/weights/state_dict_io.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::CapturedStderr;
using testing::TempFolder;

const fs::path kFixture = fs::path(TB_SHARED_DIR) / "fixtures" / "public_vq";

#define REQUIRE_FIXTURE()                         \
  if (!fs::exists(kFixture / "taming_last.ckpt")) \
  GTEST_SKIP() << "fixture folder " << kFixture << " is absent"

std::map<std::string, torch::Tensor> tensorsOf(const fs::path& file) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] : weights::loadTensors(file)) out.emplace(name, t);
  return out;
}

struct Imported {
  int code = 0;
  std::string log;
};

Imported runImport(cli::ImportArgs args) {
  CapturedStderr err;
  Imported out;
  out.code = cli::importCheckpoint(args);
  out.log = err.text();
  return out;
}

cli::ImportArgs tamingArgs(const fs::path& out) {
  cli::ImportArgs a;
  a.format = "taming";
  a.weights = (kFixture / "taming_last.ckpt").string();
  a.config = (kFixture / "taming_model.yaml").string();
  a.out = out.string();
  return a;
}

cli::ImportArgs llamagenArgs(const fs::path& out) {
  cli::ImportArgs a;
  a.format = "llamagen";
  a.weights = (kFixture / "llamagen_vq.pt").string();
  a.config = (kFixture / "llamagen_config.json").string();
  a.out = out.string();
  return a;
}

double maxAbs(const torch::Tensor& a, const torch::Tensor& b) {
  EXPECT_EQ(a.sizes(), b.sizes());
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

/// Runs the imported tokenizer on the fixture's `x` and checks every output the README lists.
void expectReferenceOutputs(const fs::path& checkpoint, const std::string& expected_file,
                            bool has_emb_loss) {
  torch::NoGradGuard no_grad;
  torch::set_num_threads(1);
  const auto input = tensorsOf(kFixture / "input.safetensors");
  const auto expected = tensorsOf(kFixture / expected_file);
  cli::LoadedCheckpoint ckpt = cli::loadCheckpoint(checkpoint, true, "cpu");
  const torch::Tensor x = input.at("x");  // [3, 3, 32, 32]
  auto& tokenizer = *ckpt.tokenizer;

  const torch::Tensor latent = tokenizer.encode(x);  // [3, 8, 1, 16, 16]
  EXPECT_LE(maxAbs(latent.squeeze(2), expected.at("prequant")), 2e-5);
  const QuantizerOutput q = tokenizer.quantize(latent);
  EXPECT_LE(maxAbs(q.quantized.squeeze(2), expected.at("quant")), 1e-6);
  const torch::Tensor indices = q.indices.flatten();
  ASSERT_EQ(indices.numel(), expected.at("indices").numel());
  const std::int64_t wrong = (indices != expected.at("indices")).sum().item<std::int64_t>();
  EXPECT_EQ(wrong, 0) << "codes differ at " << wrong << " of 768 positions";
  if (has_emb_loss) {
    const double ref = expected.at("emb_loss").item<double>();
    EXPECT_LE(std::abs(q.loss.item<double>() - ref), 1e-5 * std::abs(ref));
  }
  EXPECT_LE(maxAbs(tokenizer.decode(q.quantized).squeeze(2), expected.at("decode")), 1e-4);
  EXPECT_LE(maxAbs(tokenizer.decodeFromIndices(q.indices).squeeze(2), expected.at("decode_code")),
            1e-4);
  EXPECT_LE(maxAbs(tokenizer.forward(x).recon, expected.at("forward")), 1e-4);
  torch::set_num_threads(2);
}

TEST(PublicVq, TamingCheckpointReproducesTheReference) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  const Imported r = runImport(tamingArgs(dir.path() / "taming"));
  ASSERT_EQ(r.code, 0) << r.log;
  // What it left aside, said.
  EXPECT_NE(r.log.find("took \"state_dict\" (182 tensors); left aside: epoch, global_step, "
                       "pytorch-lightning_version, callbacks, optimizer_states, lr_schedulers"),
            std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("skipped 25 tensor(s) of the training loss (LPIPS network and "
                       "discriminator)"),
            std::string::npos)
      << r.log;
  const auto meta =
      core::SafetensorsFile::read(dir.path() / "taming" / "model.safetensors").metadata();
  EXPECT_EQ(meta.at(core::checkpoint_files::kSourceNameKey), "taming taming_last");
  expectReferenceOutputs(dir.path() / "taming", "expected_taming.safetensors", true);
}

TEST(PublicVq, LlamaGenCheckpointReproducesTheReference) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  auto args = llamagenArgs(dir.path() / "llamagen");
  args.name = "LlamaGen fixture";
  const Imported r = runImport(args);
  ASSERT_EQ(r.code, 0) << r.log;
  EXPECT_NE(r.log.find("took \"model\" (204 tensors); left aside: optimizer, discriminator, "
                       "optimizer_disc, steps, args"),
            std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("skipped 1 tensor(s) of training statistics"), std::string::npos);
  EXPECT_NE(r.log.find("(l2-normalised lookup)"), std::string::npos);
  expectReferenceOutputs(dir.path() / "llamagen", "expected_llamagen.safetensors", false);
}

TEST(PublicVq, LlamaGenWidthsComeFromTheWeightsWithoutAConfig) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  // What a LlamaGen user has: the ModelArgs fields alone (ch and num_res_blocks, which ModelArgs
  // lacks, read from the shapes; the image size left at its default).
  const fs::path args_file = dir.path() / "model_args.json";
  std::ofstream(args_file) << R"({"codebook_size": 64, "codebook_embed_dim": 8,
      "codebook_l2_norm": true, "encoder_ch_mult": [1, 1], "decoder_ch_mult": [1, 1],
      "z_channels": 16})";
  auto args = llamagenArgs(dir.path() / "llamagen");
  args.config = args_file.string();
  const Imported r = runImport(args);
  ASSERT_EQ(r.code, 0) << r.log;
  expectReferenceOutputs(dir.path() / "llamagen", "expected_llamagen.safetensors", false);
}

TEST(PublicVq, AConfigThatDoesNotFitNamesTheFirstTensorAndBothShapes) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  std::ifstream in(kFixture / "taming_model.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  yaml.replace(yaml.find("ch: 32"), 6, "ch: 64");
  const fs::path wrong = dir.path() / "wrong.yaml";
  std::ofstream(wrong) << yaml;
  auto args = tamingArgs(dir.path() / "never");
  args.config = wrong.string();
  const Imported r = runImport(args);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.log.find(wrong.string() + " does not describe the weights of " + args.weights +
                       "; the first tensor that differs: encoder.conv_in.weight [32, 3, 3, 3] "
                       "in the file, [64, 3, 3, 3] expected"),
            std::string::npos)
      << r.log;
  EXPECT_FALSE(fs::exists(dir.path() / "never"));

  // LlamaGen: a codebook of another width.
  const fs::path args_file = dir.path() / "wide.json";
  std::ofstream(args_file) << R"({"ModelArgs": {"codebook_size": 64, "codebook_embed_dim": 4,
      "encoder_ch_mult": [1, 1], "decoder_ch_mult": [1, 1], "z_channels": 16}, "resolution": 32})";
  auto l = llamagenArgs(dir.path() / "never");
  l.config = args_file.string();
  const Imported lr = runImport(l);
  EXPECT_EQ(lr.code, 2);
  EXPECT_NE(lr.log.find("the first tensor that differs: quantize.embedding.weight [64, 8] in the "
                        "file, [64, 4] expected"),
            std::string::npos)
      << lr.log;
}

TEST(PublicVq, ConfigFieldsAreNamed) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  auto withYaml = [&](const std::string& from, const std::string& to) {
    std::ifstream in(kFixture / "taming_model.yaml");
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    yaml.replace(yaml.find(from), from.size(), to);
    const fs::path file = dir.path() / "c.yaml";
    std::ofstream(file) << yaml;
    auto args = tamingArgs(dir.path() / "never");
    args.config = file.string();
    return runImport(args);
  };
  const auto kl = withYaml("double_z: false", "double_z: true");
  EXPECT_EQ(kl.code, 2);
  EXPECT_NE(kl.log.find("c.yaml: model.params.ddconfig.double_z: true makes a KL autoencoder"),
            std::string::npos)
      << kl.log;
  const auto typo = withYaml("num_res_blocks: 1", "num_res_blocks: one");
  EXPECT_NE(typo.log.find("model.params.ddconfig.num_res_blocks: must be a whole number >= 0, "
                          "got \"one\""),
            std::string::npos)
      << typo.log;
  const auto missing = withYaml("n_embed: 64", "n_embeds: 64");
  EXPECT_NE(missing.log.find("model.params.n_embed: missing"), std::string::npos) << missing.log;

  auto noConfig = llamagenArgs(dir.path() / "never");
  noConfig.config.clear();
  const auto r = runImport(noConfig);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.log.find("--format llamagen needs --model VQ-16|VQ-8"), std::string::npos);
}

TEST(PublicVq, TruncatedDamagedAndLegacyFilesAreRefusedByName) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  std::ifstream in(kFixture / "taming_last.ckpt", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto importBytes = [&](const std::string& name, const std::string& content) {
    const fs::path file = dir.path() / name;
    std::ofstream(file, std::ios::binary) << content;
    auto args = tamingArgs(dir.path() / "never");
    args.weights = file.string();
    const Imported r = runImport(args);
    EXPECT_EQ(r.code, 2) << r.log;
    EXPECT_FALSE(fs::exists(dir.path() / "never"));
    return r.log;
  };
  const std::string cut = importBytes("cut.ckpt", bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(cut.find((dir.path() / "cut.ckpt").string() + ": no zip end-of-central-directory "
                                                          "record"),
            std::string::npos)
      << cut;
  EXPECT_NE(cut.find("the file is truncated or damaged"), std::string::npos);

  // Bytes flipped inside a tensor's data: only the CRC-32 sees it.
  std::string flipped = bytes;
  for (std::size_t i = 0; i < 16; ++i) flipped[flipped.size() / 2 + i] ^= 0x5a;
  const std::string damaged = importBytes("damaged.ckpt", flipped);
  EXPECT_NE(damaged.find("fails its CRC-32 check: the file is damaged"), std::string::npos)
      << damaged;

  const std::string legacy = importBytes(
      "legacy.ckpt",
      std::string("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 14) + "K\x01.");
  EXPECT_NE(legacy.find("legacy.ckpt: written in torch's legacy format"), std::string::npos)
      << legacy;
  EXPECT_NE(legacy.find("['state_dict']"), std::string::npos);
}

#if TB_WITH_OPENCV
TEST(PublicVq, TokenizeOfAnImageGivesTheReferenceCodes) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  ASSERT_EQ(runImport(tamingArgs(dir.path() / "taming")).code, 0);
  cli::TokenizeArgs args;
  args.checkpoint = (dir.path() / "taming").string();
  args.input = (kFixture / "img_1.png").string();
  args.out = (dir.path() / "tokens").string();
  args.device = "cpu";
  {
    CapturedStderr err;
    ::testing::internal::CaptureStdout();
    ASSERT_EQ(cli::tokenize(args), 0) << err.text();
    ::testing::internal::GetCapturedStdout();
  }
  const auto tokens = tensorsOf(dir.path() / "tokens" / "img_1.safetensors").at("tokens");
  const auto expected = tensorsOf(kFixture / "expected_taming.safetensors").at("indices");
  EXPECT_TRUE(torch::equal(tokens.flatten().to(torch::kLong), expected.slice(0, 256, 512)));
}
#endif

}  // namespace
}  // namespace tb::trainer
