// Checkpoints move between builds against different LibTorch versions (Debian's 1.13 and a 2.x
// wheel, scripts/test-torch2.sh): each build resumes what the other wrote, and a run resumed by
// the other build ends where the writer's own resume ends. The other build's trainer is
// TB_PEER_TRAINER (a CMake cache variable); without one the test skips.
#include "tests/distributed/run_weights.h"
#include "tests/distributed/trainer_process.h"
#include "tests/trainer/test_support.h"
#include "trainer/torch_compat.h"

#include <gtest/gtest.h>

#include <regex>

namespace tb::trainer {
namespace {

namespace fs = std::filesystem;
using testing::TempFolder;
using testing::TrainerProcess;

const std::string kSelf = TB_TRAINER_EXE;
const std::string kPeer = TB_PEER_TRAINER;

// "LibTorch 2.11.0, BLAS ..." of `trainer --version`: the version.
std::string libtorchOf(const std::string& trainer, const fs::path& out) {
  TrainerProcess p({"--version"}, out, {}, trainer);
  EXPECT_EQ(p.wait(std::chrono::seconds(60)).value_or(-1), 0);
  std::smatch m;
  const std::string text = p.stdoutText();
  static const std::regex line("LibTorch ([0-9][^,]*),");
  return std::regex_search(text, m, line) ? m[1].str() : std::string("?");
}

// Runs `trainer train` with `args` in `run`; the exit code, its stderr on failure.
int train(const std::string& trainer, const fs::path& run, std::vector<std::string> args) {
  args.insert(args.begin(), {"train", "--run-dir", run.string()});
  TrainerProcess p(args, run.string() + "_" + std::to_string(args.size()), {}, trainer);
  const int code = p.wait(std::chrono::seconds(240)).value_or(-1);
  EXPECT_EQ(code, 0) << trainer << " in " << run << ":\n" << p.stderrText();
  // The resumed run says where it started.
  if (std::find(args.begin(), args.end(), "--resume") != args.end()) {
    EXPECT_NE(p.stderrText().find("from step 4 to 6"), std::string::npos) << p.stderrText();
  }
  return code;
}

TEST(Portability, CheckpointsResumeInABuildAgainstAnotherLibTorch) {
  if (kPeer.empty() || !fs::exists(kPeer)) {
    GTEST_SKIP() << "TB_PEER_TRAINER names no trainer built against another LibTorch "
                    "(scripts/test-torch2.sh sets it)";
  }
  TempFolder dir;
  const std::string self_version = compat::torchVersion();
  const std::string peer_version = libtorchOf(kPeer, dir.path() / "peer_version");
  ASSERT_NE(peer_version, self_version) << "both trainers use LibTorch " << self_version;
  std::cout << "portability: this build LibTorch " << self_version << ", the other " << peer_version
            << "\n";

  // Every file a checkpoint can hold: tokenizer, EMA, discriminator, both optimisers, RNG.
  core::RunConfig c = testing::tinyRunConfig();
  c.train.ema = true;
  c.train.ema_start_step = 0;
  c.train.checkpoint_every = 2;
  c.loss.adversarial_weight = 0.1;
  c.loss.discr_start_step = 0;
  c.model.discriminator.max_dim = 16;
  const fs::path config = testing::writeConfig(c, dir.path() / "config.json");

  for (const auto& [writer, other] : {std::pair{kPeer, kSelf}, std::pair{kSelf, kPeer}}) {
    const std::string label = writer == kSelf ? "self" : "peer";
    const fs::path written = dir.path() / ("written_by_" + label);
    ASSERT_EQ(train(writer, written, {"--config", config.string()}), 0);
    // The writer resumes its own checkpoint, and the other build resumes a copy of it.
    const fs::path by_writer = dir.path() / (label + "_resumed_by_writer");
    const fs::path by_other = dir.path() / (label + "_resumed_by_other");
    fs::copy(written, by_writer, fs::copy_options::recursive);
    fs::copy(written, by_other, fs::copy_options::recursive);
    ASSERT_EQ(train(writer, by_writer, {"--resume", "--set", "train.max_steps=6"}), 0);
    ASSERT_EQ(train(other, by_other, {"--resume", "--set", "train.max_steps=6"}), 0);
    // Two steps on from the same state agree to the libraries' rounding; a resume that lost the
    // optimiser state, the EMA or the data position differs by the learning rate's order (1e-3).
    for (const std::string file :
         {"model.safetensors", "ema.safetensors", "discriminator.safetensors"}) {
      const double diff = testing::maxDifference(testing::finalWeights(by_writer, 6, file),
                                                 testing::finalWeights(by_other, 6, file));
      std::cout << "portability: written by the " << (writer == kSelf ? self_version : peer_version)
                << " build, " << file << " after resuming 2 steps: largest difference " << diff
                << "\n";
      EXPECT_LT(diff, 1e-4) << file;
    }
  }
}

}  // namespace
}  // namespace tb::trainer
