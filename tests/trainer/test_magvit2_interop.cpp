// magvit2-pytorch checkpoints in and out, against ../shared/fixtures/magvit2_pytorch (what the
// reference computed at a00519f): the pickle reader, import-magvit2, export-magvit2, the pixel
// range, fine-tuning from an imported checkpoint.
#include "core/config_io.h"
#include "test_support.h"
#include "trainer/cli/magvit2_commands.h"
#include "trainer/cli/token_commands.h"
#include "trainer/models/magvit_tokenizer.h"
#include "trainer/weights/magvit2_kwargs.h"
#include "trainer/weights/magvit2_names.h"
#include "trainer/weights/pickle_reader.h"
#include "trainer/weights/state_dict_io.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_encoder.h"
#endif

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::CapturedStderr;
using testing::TempFolder;
using Json = nlohmann::json;

const fs::path kFixture = fs::path(TB_SHARED_DIR) / "fixtures" / "magvit2_pytorch";

bool fixturePresent() { return fs::exists(kFixture / "tokenizer.pt"); }

#define REQUIRE_FIXTURE() \
  if (!fixturePresent()) GTEST_SKIP() << "fixture folder " << kFixture << " is absent"

std::map<std::string, torch::Tensor> tensorsOf(const fs::path& file) {
  std::map<std::string, torch::Tensor> out;
  for (auto& [name, t] : weights::loadTensors(file)) out.emplace(name, t);
  return out;
}

void expectSameTensors(const std::map<std::string, torch::Tensor>& a,
                       const std::map<std::string, torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.count(name)) << name;
    EXPECT_EQ(t.sizes(), b.at(name).sizes()) << name;
    EXPECT_EQ(t.scalar_type(), b.at(name).scalar_type()) << name;
    EXPECT_TRUE(torch::equal(t, b.at(name))) << name;
  }
}

int importFixture(const std::string& weights, const fs::path& out, std::string* log = nullptr) {
  cli::ImportMagvit2Args args;
  args.weights = (kFixture / weights).string();
  args.config = (kFixture / "config.json").string();
  args.out = out.string();
  CapturedStderr err;
  const int code = cli::importMagvit2(args);
  if (log) *log = err.text();
  return code;
}

/// The bytes of a string literal, NULs included.
template <std::size_t N>
std::string bytesOf(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

std::string pickleError(const std::string& bytes) {
  try {
    weights::readPickle(bytes, "probe.pkl");
  } catch (const weights::PickleError& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- the pickle reader -----------------------------------------------------------------------

TEST(PickleReader, ReadsVideoTokenizerSaveTensorsAndItsPickledConfig) {
  REQUIRE_FIXTURE();
  const weights::PickleRef root = weights::readTorchSave(kFixture / "tokenizer.pt");
  ASSERT_EQ(root->kind, weights::PickleValue::Kind::Dict);
  const auto* state = root->find("model_state_dict");
  ASSERT_NE(state, nullptr);
  std::map<std::string, torch::Tensor> read;
  for (const auto& [k, v] : state->entries) {
    ASSERT_EQ(v->kind, weights::PickleValue::Kind::Tensor) << k->text;
    read.emplace(k->text, v->tensor);
  }
  // The same tensors as the safetensors export, bit for bit (the OrderedDict LibTorch drops).
  expectSameTensors(read, tensorsOf(kFixture / "tokenizer.safetensors"));
  ASSERT_NE(root->find("version"), nullptr);
  EXPECT_EQ(root->find("version")->text, "0.5.1");

  const auto* config = root->find("config");
  ASSERT_NE(config, nullptr);
  ASSERT_EQ(config->kind, weights::PickleValue::Kind::Bytes);
  const Json kwargs = weights::kwargsFromPickle(*weights::readPickle(config->text, "config"));
  EXPECT_EQ(kwargs["image_size"], 32);
  EXPECT_EQ(kwargs["codebook_size"], 256);
  EXPECT_EQ(kwargs["layers"][2], Json::array({"consecutive_residual", 1}));
  EXPECT_EQ(kwargs["lfq_activation"]["__object__"], "torch.nn.modules.linear.Identity");
  EXPECT_DOUBLE_EQ(kwargs["lfq_diversity_gamma"].get<double>(), 2.5);
}

TEST(PickleReader, MutatedPicklesAreRefusedWithAPickleErrorNeverACrash) {
  // The pickled configuration of the fixture's .pt file (every container opcode, globals,
  // REDUCE/BUILD, memo) under 4000 seeded mutations: byte flips, insertions, deletions and
  // truncations. Each either reads or throws PickleError; anything else (another exception, a
  // crash, a hang) fails the test.
  REQUIRE_FIXTURE();
  const weights::PickleRef root = weights::readTorchSave(kFixture / "tokenizer.pt");
  const std::string seed = root->find("config")->text;
  ASSERT_GT(seed.size(), 100u);
  std::mt19937 rng(20261204);
  int refused = 0, read = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string bytes = seed;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<char>(rng() & 0xff);
          break;
        case 1:
          bytes.insert(at, 1, static_cast<char>(rng() & 0xff));
          break;
        case 2:
          bytes.erase(at, 1 + rng() % 8);
          break;
        default:
          bytes.resize(at);
          break;
      }
    }
    try {
      (void)weights::readPickle(bytes, "mutant.pkl");
      ++read;
    } catch (const weights::PickleError& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find("mutant.pkl"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "mutation " << i << ": not a PickleError: " << e.what();
    }
  }
  EXPECT_GT(refused, 1000) << "the mutations should mostly break the pickle";
  std::cout << "pickle mutations: " << refused << " refused, " << read << " read\n";
}

TEST(PickleReader, RefusesWhatItCannotReadNamingTheSourceAndOffset) {
  // Protocol 0's text INT at byte 2.
  EXPECT_NE(
      pickleError(bytesOf("\x80\x02I1\n.")).find("probe.pkl: byte 2: pickle opcode 0x49 (INT)"),
      std::string::npos);
  // A string whose length runs past the end.
  EXPECT_NE(pickleError(bytesOf("\x80\x02X\x05\x00\x00\x00"
                                "ab"))
                .find("truncated"),
            std::string::npos);
  EXPECT_NE(pickleError(bytesOf("\x80\x02h\x07.")).find("memo entry 7 was never stored"),
            std::string::npos);
  EXPECT_NE(pickleError(bytesOf("\x80\x02N")).find("without STOP"), std::string::npos);
  // Nesting past the bound: 300 lists in lists.
  std::string deep = "\x80\x02";
  for (int i = 0; i < 300; ++i) deep += "(";
  for (int i = 0; i < 300; ++i) deep += "l";
  deep += ".";
  EXPECT_NE(pickleError(deep).find("nested deeper than"), std::string::npos);
}

TEST(PickleReader, RefusesAFileThatIsNoTorchSaveArchive) {
  TempFolder dir;
  auto messageFor = [&](const std::string& name, const std::string& bytes) {
    const fs::path file = dir.path() / name;
    std::ofstream(file, std::ios::binary) << bytes;
    try {
      weights::readTorchSave(file);
    } catch (const weights::PickleError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  // torch.save's legacy format: protocol 2, then the magic number 0x1950a86a20f9469cfc6c.
  const std::string legacy =
      messageFor("legacy.pt", bytesOf("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
                                      "K\x01.legacy pickle"));
  EXPECT_EQ(
      legacy.rfind((dir.path() / "legacy.pt").string() + ": written in torch's legacy format", 0),
      0u)
      << legacy;
  EXPECT_NE(legacy.find("torch.save(torch.load('IN', map_location='cpu'), 'OUT')"),
            std::string::npos);
  EXPECT_EQ(messageFor("text.pt", "hello"),
            (dir.path() / "text.pt").string() +
                ": not a torch.save file (neither a zip archive nor torch's legacy format)");
  EXPECT_EQ(messageFor("cut.pt", bytesOf("PK\x03\x04\x00\x00")),
            (dir.path() / "cut.pt").string() +
                ": no zip end-of-central-directory record (truncated, or not a zip archive): the "
                "file is truncated or damaged");
}

TEST(PickleReader, RefusesAStorageOfTheWrongSize) {
  TempFolder dir;
  const fs::path file = dir.path() / "short.pt";
  {
    // {"w": _rebuild_tensor_v2(storage 0 of 4 floats, 0, (4,), (1,), False, OrderedDict())}
    // with only 8 bytes of data.
    const std::string pkl = bytesOf(
        "\x80\x02}q\x00X\x01\x00\x00\x00wctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00"
        "storagectorch\nFloatStorage\nX\x01\x00\x00\x00"
        "0X\x03\x00\x00\x00"
        "cpuK\x04tQK\x00K\x04\x85K\x01\x85\x89"
        "ccollections\nOrderedDict\n)RtRs.");
    ASSERT_EQ(pkl.size(), 136u);
    caffe2::serialize::PyTorchStreamWriter writer(file.string());
    writer.writeRecord("data.pkl", pkl.data(), pkl.size());
    const float data[2] = {1, 2};
    writer.writeRecord("data/0", data, sizeof data);
    writer.writeEndOfFile();
  }
  try {
    weights::readTorchSave(file);
    FAIL() << "no error";
  } catch (const weights::PickleError& e) {
    EXPECT_NE(std::string(e.what()).find("storage data/0 holds 8 bytes, its 4 elements need 16"),
              std::string::npos)
        << e.what();
  }
}

// ---- import ----------------------------------------------------------------------------------

TEST(Magvit2Import, BothFilesGiveTheReferenceCodesAndReconstructions) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  ASSERT_EQ(importFixture("tokenizer.safetensors", dir.path() / "from_st"), 0);
  ASSERT_EQ(importFixture("tokenizer.pt", dir.path() / "from_pt"), 0);
  expectSameTensors(tensorsOf(dir.path() / "from_st" / "model.safetensors"),
                    tensorsOf(dir.path() / "from_pt" / "model.safetensors"));

  const auto input = tensorsOf(kFixture / "input.safetensors");
  const auto expected = tensorsOf(kFixture / "expected.safetensors");
  const cli::LoadedCheckpoint ckpt = cli::loadCheckpoint(dir.path() / "from_pt");
  EXPECT_EQ(ckpt.config.model.pixel_range, core::PixelRange::ZeroOne);
  // Tokenbench frames are [-1, 1]; the imported tokenizer maps them to the [0, 1] it was trained
  // on.
  const torch::Tensor video = input.at("video") * 2 - 1;
  torch::NoGradGuard no_grad;
  const torch::Tensor codes = ckpt.tokenizer->tokenize(video);
  EXPECT_TRUE(torch::equal(codes, expected.at("codes"))) << codes.sizes();

  const torch::Tensor from_codes =
      (ckpt.tokenizer->decodeFromIndices(expected.at("codes")) + 1) / 2;
  const double from_codes_error =
      (from_codes - expected.at("recon_from_codes")).abs().max().item<double>();
  EXPECT_LT(from_codes_error, 1e-4);
  const torch::Tensor recon = (ckpt.tokenizer->forward(video).recon + 1) / 2;
  const double recon_error = (recon - expected.at("recon")).abs().max().item<double>();
  EXPECT_LT(recon_error, 1e-4);
  RecordProperty("decode_from_code_indices_max_abs_error", std::to_string(from_codes_error));
  RecordProperty("forward_max_abs_error", std::to_string(recon_error));
}

// Bytes flipped inside tensor data imported with exit 0 and other weights: LibTorch's zip
// reader skips the CRC-32 that every record carries.
TEST(Magvit2Import, AFileWithChangedTensorBytesIsRefusedByItsCrc) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  std::ifstream in(kFixture / "tokenizer.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t i = 0; i < 8; ++i) bytes[bytes.size() / 2 + i] ^= 0x21;
  const fs::path damaged = dir.path() / "damaged.pt";
  std::ofstream(damaged, std::ios::binary) << bytes;
  cli::ImportMagvit2Args args;
  args.weights = damaged.string();
  args.out = (dir.path() / "never").string();
  CapturedStderr err;
  EXPECT_EQ(cli::importMagvit2(args), 2);
  EXPECT_NE(err.text().find(damaged.string() + ": record data/"), std::string::npos) << err.text();
  EXPECT_NE(err.text().find("fails its CRC-32 check"), std::string::npos) << err.text();
  EXPECT_FALSE(fs::exists(dir.path() / "never"));
}

TEST(Magvit2Import, UnmatchedTensorsExitTwoListingThemWithTheirShapes) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  auto tensors = weights::loadTensors(kFixture / "tokenizer.safetensors");
  tensors.erase(
      std::remove_if(tensors.begin(), tensors.end(),
                     [](const auto& t) { return t.first == "encoder_layers.3.0.fn.mem_kv"; }),
      tensors.end());
  tensors.emplace_back("encoder_layers.9.extra", torch::zeros({2, 3}));
  for (auto& [name, t] : tensors)
    if (name == "quantizers.project_in.weight") t = torch::zeros({8, 31});
  weights::saveTensors(tensors, dir.path() / "odd.safetensors");

  cli::ImportMagvit2Args args;
  args.weights = (dir.path() / "odd.safetensors").string();
  args.config = (kFixture / "config.json").string();
  args.out = (dir.path() / "ckpt").string();
  CapturedStderr err;
  EXPECT_EQ(cli::importMagvit2(args), 2);
  const std::string log = err.text();
  EXPECT_NE(log.find("not in the file: encoder_layers.3.0.fn.mem_kv [2, 8, 4, 32] (Tokenbench "
                     "encoder_layers.3.attn.mem_kv)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("no place in Tokenbench: encoder_layers.9.extra [2, 3]"), std::string::npos)
      << log;
  EXPECT_NE(
      log.find("shape differs: quantizers.project_in.weight [8, 31] in the file, [8, 32] expected"),
      std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(args.out));
}

TEST(Magvit2Import, RefusesArgumentsTokenbenchCannotHonourNamingEach) {
  const Json kwargs = {{"image_size", 32},
                       {"codebook_size", 256},
                       {"pad_mode", "reflect"},
                       {"dim_cond_expansion_factor", 2.0},
                       {"layers", {"residual", "cond_attend_space"}},
                       {"dim_cond", 8},
                       {"use_fsq_typo", true}};
  const auto imported = weights::importVideoTokenizerKwargs(kwargs);
  const auto has = [&](const std::string& start) {
    return std::any_of(imported.errors.begin(), imported.errors.end(),
                       [&](const std::string& e) { return e.rfind(start, 0) == 0; });
  };
  EXPECT_TRUE(has("pad_mode: "));
  EXPECT_TRUE(has("dim_cond_expansion_factor: "));
  EXPECT_TRUE(has("layers[1]: cond_attend_space"));
  EXPECT_TRUE(has("use_fsq_typo: not a keyword argument"));
  EXPECT_EQ(imported.errors.size(), 4u);
}

TEST(Magvit2Import, DiscriminatorComesAlongWhenItFitsAndIsReportedWhenNot) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  std::ifstream in(kFixture / "config.json");
  const auto imported = weights::importVideoTokenizerKwargs(Json::parse(in));
  ASSERT_TRUE(imported.errors.empty());
  torch::manual_seed(3);
  auto discr = makeDiscriminator(imported.config.model, imported.config.data);
  // The reference's default discriminator on 32x32 frames of a 32-channel latent: 4 blocks.
  const auto names =
      weights::referenceDiscriminatorTensors(dynamic_cast<FrameDiscriminatorImpl&>(*discr));
  auto tensors = weights::loadTensors(kFixture / "tokenizer.safetensors");
  std::map<std::string, torch::Tensor> state;
  for (auto& [n, t] : weights::stateDict(*discr)) state.emplace(n, t);
  for (const auto& n : names)
    tensors.emplace_back(n.reference, state.at(n.tokenbench).reshape(n.reference_shape));
  EXPECT_EQ(std::count_if(
                names.begin(), names.end(),
                [](const auto& n) { return n.reference == "discr.blocks.3.1.1.fn.net.0.weight"; }),
            1);
  weights::saveTensors(tensors, dir.path() / "with_discr.safetensors");

  cli::ImportMagvit2Args args;
  args.weights = (dir.path() / "with_discr.safetensors").string();
  args.config = (kFixture / "config.json").string();
  args.out = (dir.path() / "ckpt").string();
  {
    CapturedStderr err;
    ASSERT_EQ(cli::importMagvit2(args), 0) << err.text();
  }
  std::map<std::string, torch::Tensor> expected;
  for (auto& [n, t] : weights::stateDict(*discr)) expected.emplace(n, t.detach());
  expectSameTensors(tensorsOf(fs::path(args.out) / "discriminator.safetensors"), expected);

  // An antialiased reference discriminator has blur filters Tokenbench's lacks: left out, reported.
  tensors.emplace_back("discr.blocks.0.0.maybe_blur.f", torch::tensor({1.0f, 2.0f, 1.0f}));
  weights::saveTensors(tensors, dir.path() / "blurred.safetensors");
  args.weights = (dir.path() / "blurred.safetensors").string();
  args.out = (dir.path() / "ckpt2").string();
  CapturedStderr err;
  ASSERT_EQ(cli::importMagvit2(args), 0);
  EXPECT_NE(err.text().find("no place in Tokenbench: discr.blocks.0.0.maybe_blur.f [3]"),
            std::string::npos)
      << err.text();
  EXPECT_TRUE(fs::exists(fs::path(args.out) / "model.safetensors"));
  EXPECT_FALSE(fs::exists(fs::path(args.out) / "discriminator.safetensors"));
}

#if TB_WITH_FFMPEG
TEST(Magvit2Import, TokenizingALosslessVideoOfTheFramesGivesTheReferenceCodes) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  ASSERT_EQ(importFixture("tokenizer.pt", dir.path() / "ckpt"), 0);
  const torch::Tensor frames =
      tensorsOf(kFixture / "input.safetensors").at("frames_u8").contiguous();
  media::VideoFrames clip;
  clip.width = static_cast<int>(frames.size(2));
  clip.height = static_cast<int>(frames.size(1));
  clip.count = static_cast<int>(frames.size(0));
  clip.fps = 8;
  clip.rgb.assign(frames.data_ptr<std::uint8_t>(),
                  frames.data_ptr<std::uint8_t>() + frames.numel());
  fs::create_directories(dir.path() / "videos");
  media::writeVideo((dir.path() / "videos" / "fixture.mkv").string(), clip);  // FFV1: lossless

  cli::TokenizeArgs args;
  args.checkpoint = (dir.path() / "ckpt").string();
  args.input = (dir.path() / "videos").string();
  args.out = (dir.path() / "tokens").string();
  ASSERT_EQ(cli::tokenize(args), 0);
  const auto tokens = tensorsOf(dir.path() / "tokens" / "fixture.safetensors").at("tokens");
  const auto expected = tensorsOf(kFixture / "expected.safetensors").at("codes")[0];
  EXPECT_TRUE(torch::equal(tokens.to(torch::kLong), expected));
}

// A magvit2-pytorch user with only the keyword arguments and a state dict: a 9-frame video codes
// whole (in chunks of one latent frame, the causal state carried across), whatever
// data.num_frames the import wrote, and its first 5 frames, which a causal tokenizer codes
// without looking further, give the reference's codes of those 5 frames.
TEST(Magvit2Import, ANineFrameVideoTokenizesWholeWithKwargsOnly) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  // Only the VideoTokenizer keyword arguments: no frame count (the fixture's "frames" is its own).
  Json fixture_config;
  std::ifstream(kFixture / "config.json") >> fixture_config;
  const fs::path kwargs = dir.path() / "kwargs.json";
  std::ofstream(kwargs) << fixture_config.at("VideoTokenizer").dump();
  {
    cli::ImportMagvit2Args import;
    import.weights = (kFixture / "tokenizer.safetensors").string();
    import.config = kwargs.string();
    import.out = (dir.path() / "ckpt").string();
    CapturedStderr err;
    ASSERT_EQ(cli::importMagvit2(import), 0) << err.text();
  }
  const torch::Tensor five = tensorsOf(kFixture / "input.safetensors").at("frames_u8");
  ASSERT_EQ(five.size(0), 5);
  // Frames 5-8: the first four again, in reverse.
  const torch::Tensor frames = torch::cat({five, five.slice(0, 0, 4).flip({0})}, 0).contiguous();
  media::VideoFrames clip;
  clip.width = static_cast<int>(frames.size(2));
  clip.height = static_cast<int>(frames.size(1));
  clip.count = 9;
  clip.fps = 8;
  clip.rgb.assign(frames.data_ptr<std::uint8_t>(),
                  frames.data_ptr<std::uint8_t>() + frames.numel());
  const fs::path video = dir.path() / "nine.mkv";
  media::writeVideo(video.string(), clip);  // FFV1: lossless

  cli::TokenizeArgs args;
  args.checkpoint = (dir.path() / "ckpt").string();
  args.input = video.string();
  args.out = (dir.path() / "tokens").string();
  args.chunk = 1;
  CapturedStderr err;
  ASSERT_EQ(cli::tokenize(args), 0) << err.text();
  EXPECT_EQ(err.text().find("coding frames"), std::string::npos) << err.text();  // all 9
  const auto tokens = tensorsOf(dir.path() / "tokens" / "nine.safetensors").at("tokens");
  const auto expected = tensorsOf(kFixture / "expected.safetensors").at("codes")[0];
  const auto ckpt = cli::loadCheckpoint(dir.path() / "ckpt");
  EXPECT_EQ(tokens.size(0), ckpt.tokenizer->tokenGrid(9, clip.width)[0]);
  EXPECT_GT(tokens.size(0), expected.size(0));
  EXPECT_TRUE(torch::equal(tokens.slice(0, 0, expected.size(0)).to(torch::kLong), expected));
}
#endif

// ---- export ----------------------------------------------------------------------------------

TEST(Magvit2Export, WritesTheReferenceNamesShapesAndArgumentsAndImportsBackUnchanged) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  ASSERT_EQ(importFixture("tokenizer.safetensors", dir.path() / "ckpt"), 0);
  cli::ExportMagvit2Args args;
  args.checkpoint = (dir.path() / "ckpt").string();
  args.out = (dir.path() / "export.safetensors").string();
  args.config_out = (dir.path() / "kwargs.json").string();
  {
    CapturedStderr err;
    ASSERT_EQ(cli::exportMagvit2(args), 0) << err.text();
  }
  // Every key, shape, dtype and value of the reference's own state dict: what
  // load_state_dict(strict=True) checks.
  expectSameTensors(tensorsOf(args.out), tensorsOf(kFixture / "tokenizer.safetensors"));
  EXPECT_EQ(core::SafetensorsFile::read(args.out).metadata().at("pixel_range"), "[0, 1]");

  std::ifstream in(args.config_out);
  const Json kwargs = Json::parse(in);
  EXPECT_EQ(kwargs["layers"][2], Json::array({"consecutive_residual", 1}));
  const auto reimported = weights::importVideoTokenizerKwargs(kwargs);
  ASSERT_TRUE(reimported.errors.empty());
  const cli::LoadedCheckpoint ckpt = cli::loadCheckpoint(dir.path() / "ckpt");
  EXPECT_EQ(core::toJson(reimported.config)["model"], core::toJson(ckpt.config)["model"]);

  cli::ImportMagvit2Args back;
  back.weights = args.out;
  back.config = args.config_out;
  back.out = (dir.path() / "again").string();
  CapturedStderr err;
  ASSERT_EQ(cli::importMagvit2(back), 0) << err.text();
  expectSameTensors(tensorsOf(dir.path() / "again" / "model.safetensors"),
                    tensorsOf(dir.path() / "ckpt" / "model.safetensors"));
}

TEST(Magvit2Export, RefusesSettingsTheReferenceCannotExpressNamingTheKey) {
  core::RunConfig c;
  c.model.time_padding = core::TimePadding::Replicate;
  c.model.time_alignment = core::TimeAlignment::Blocks;
  c.model.attn_num_mem_kv = 2;
  c.model.quantizer.type = core::QuantizerType::Fsq;
  c.model.quantizer.commitment_loss_weight = 0.25;
  c.model.layers.push_back({"cond_attend_space", {}});
  auto refused = weights::exportVideoTokenizerKwargs(c).errors;
  ASSERT_EQ(refused.size(), 6u);
  EXPECT_EQ(refused[0].rfind("model.time_padding: ", 0), 0u) << refused[0];
  EXPECT_EQ(refused[1].rfind("model.time_alignment: \"blocks\"", 0), 0u) << refused[1];
  EXPECT_EQ(refused[2].rfind("model.encoder_norm: true", 0), 0u) << refused[2];
  EXPECT_EQ(refused[3].rfind("model.attn_num_mem_kv: ", 0), 0u) << refused[3];
  EXPECT_EQ(refused[4].rfind("model.layers[5]: cond_attend_space", 0), 0u) << refused[4];
  EXPECT_EQ(refused[5].rfind("model.quantizer.commitment_loss_weight: ", 0), 0u) << refused[5];

  core::RunConfig vqgan;
  vqgan.model.kind = core::ModelKind::Vqgan;
  vqgan.model.quantizer.type = core::QuantizerType::Vq;
  refused = weights::exportVideoTokenizerKwargs(vqgan).errors;
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(refused[0].rfind("model.kind: \"vqgan\"", 0), 0u) << refused[0];
  EXPECT_EQ(refused[1].rfind("model.quantizer.type: \"vq\"", 0), 0u) << refused[1];
}

// ---- the pixel range and training ------------------------------------------------------------

TEST(PixelRange, AZeroOneTokenizerSeesUnitFramesAndGivesSignedOnes) {
  core::RunConfig c;
  c.data.image_size = 16;
  c.model.init_dim = 8;
  c.model.max_dim = 16;
  c.model.quantizer.codebook_size = 16;
  torch::manual_seed(0);
  MagvitTokenizer signed_range(c.model, 16);
  c.model.pixel_range = core::PixelRange::ZeroOne;
  MagvitTokenizer unit_range(c.model, 16);
  torch::NoGradGuard no_grad;
  for (auto& [name, t] : weights::stateDict(*unit_range))
    t.copy_(signed_range->named_parameters()[name]);
  const torch::Tensor frames = torch::rand({1, 3, 5, 16, 16}) * 2 - 1;
  EXPECT_TRUE(torch::allclose(unit_range->encode(frames), signed_range->encode((frames + 1) / 2)));
  const torch::Tensor latent = torch::randn({1, 16, 3, 8, 8});
  EXPECT_TRUE(torch::allclose(unit_range->decode(latent), signed_range->decode(latent) * 2 - 1));
}

TEST(Magvit2Import, TrainingStartsFromTheImportedWeightsAndRefusesAnotherPixelRange) {
  REQUIRE_FIXTURE();
  TempFolder dir;
  ASSERT_EQ(importFixture("tokenizer.pt", dir.path() / "ckpt"), 0);
  core::RunConfig config = cli::loadCheckpoint(dir.path() / "ckpt").config;
  config.data.num_frames = 5;
  config.data.synthetic_clips = 4;
  config.data.workers = 0;
  config.train.batch_size = 1;
  config.train.max_steps = 1;
  config.train.warmup_steps = 0;
  config.train.lr = 1e-12;  // the one step moves nothing measurable
  config.train.ema = false;
  config.train.valid_every = 0;
  config.train.sample_every = 0;
  config.loss.perceptual_weight = 0;
  config.loss.adversarial_weight = 0;
  config.train.init_checkpoint = (dir.path() / "ckpt").string();
  const auto result = testing::train(config, dir.path() / "run");
  ASSERT_EQ(result.code, 0);
  const auto trained =
      tensorsOf(core::RunDirectory(dir.path() / "run").checkpointDir(1) / "model.safetensors");
  const auto imported = tensorsOf(dir.path() / "ckpt" / "model.safetensors");
  ASSERT_EQ(trained.size(), imported.size());
  for (const auto& [name, t] : imported)
    EXPECT_LT((trained.at(name) - t).abs().max().item<double>(), 1e-8) << name;

  config.model.pixel_range = core::PixelRange::MinusOneOne;
  const auto refused = testing::train(config, dir.path() / "run2");
  EXPECT_NE(refused.code, 0);
  const bool named =
      std::any_of(refused.events.begin(), refused.events.end(), [](const std::string& e) {
        return e.find("init_checkpoint_invalid") != std::string::npos &&
               e.find("model.pixel_range is zero_one") != std::string::npos;
      });
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace tb::trainer
