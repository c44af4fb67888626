#include "core/checkpoint_files.h"
#include "core/run_directory.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::core {
namespace {
namespace fs = std::filesystem;

// A fresh folder per test, removed afterwards.
class RunDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tb_run_directory_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_base = fs::canonical(pattern);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_base, ec);
  }

  static void touch(const fs::path& file) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << "x";
  }

  fs::path m_base;
};

TEST_F(RunDirectoryTest, LayoutPaths) {
  const RunDirectory run(m_base / "run");
  const fs::path root = m_base / "run";
  EXPECT_EQ(run.root(), root);
  EXPECT_EQ(run.configFile(), root / "config.json");
  EXPECT_EQ(run.metricsFile(), root / "metrics.jsonl");
  EXPECT_EQ(run.indexCacheFile(), root / "data_index.json");
  EXPECT_EQ(run.lockFile(), root / ".lock");
  EXPECT_EQ(run.tensorboardDir(), root / "tensorboard");
  EXPECT_EQ(run.samplesDir(), root / "samples");
  EXPECT_EQ(run.checkpointsDir(), root / "checkpoints");
  EXPECT_EQ(run.logsDir(), root / "logs");
  EXPECT_EQ(run.checkpointDir(0), root / "checkpoints" / "step_0");
  EXPECT_EQ(run.checkpointDir(1200), root / "checkpoints" / "step_1200");
  EXPECT_EQ(run.checkpointTempDir(1200), root / "checkpoints" / ".step_1200.tmp");
  EXPECT_THROW(run.checkpointDir(-1), std::invalid_argument);
  EXPECT_THROW(run.checkpointTempDir(-5), std::invalid_argument);
  EXPECT_EQ(run.codebookFile(40), root / "codebook" / "step_40.safetensors");
  EXPECT_THROW(run.codebookFile(-1), std::invalid_argument);
}

TEST_F(RunDirectoryTest, CreateMakesEveryFolderAndIsIdempotent) {
  const RunDirectory run(m_base / "a" / "b" / "run");
  ASSERT_FALSE(fs::exists(run.root()));
  run.create();
  for (const fs::path& dir :
       {run.root(), run.tensorboardDir(), run.samplesDir(), run.checkpointsDir(), run.logsDir()}) {
    EXPECT_TRUE(fs::is_directory(dir)) << dir;
  }
  EXPECT_NO_THROW(run.create());
  EXPECT_FALSE(fs::exists(run.configFile()));  // files are not created, only folders
}

TEST_F(RunDirectoryTest, CreateThrowsNamingThePathWhenAFileIsInTheWay) {
  touch(m_base / "run" / "samples");
  const RunDirectory run(m_base / "run");
  try {
    run.create();
    FAIL() << "create() should have thrown";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((m_base / "run" / "samples").string()), std::string::npos)
        << e.what();
  }
}

TEST_F(RunDirectoryTest, ContainsAcceptsPathsInsideTheRoot) {
  const RunDirectory run(m_base / "run");
  run.create();
  touch(run.samplesDir() / "a.gif");
  EXPECT_TRUE(run.contains("samples/a.gif"));
  EXPECT_TRUE(run.contains(run.samplesDir() / "a.gif"));
  EXPECT_TRUE(run.contains("samples/not_written_yet/b.gif"));
  EXPECT_TRUE(run.contains("samples/../config.json"));
  EXPECT_TRUE(run.contains("./checkpoints/step_10/"));
  EXPECT_TRUE(run.contains(""));
  EXPECT_TRUE(run.contains(run.root()));
}

TEST_F(RunDirectoryTest, ContainsRejectsEscapes) {
  const RunDirectory run(m_base / "run");
  run.create();
  EXPECT_FALSE(run.contains(".."));
  EXPECT_FALSE(run.contains("../other/config.json"));
  EXPECT_FALSE(run.contains("samples/../../other"));
  EXPECT_FALSE(run.contains("samples/missing/../../../x"));
  EXPECT_FALSE(run.contains("/etc/passwd"));
  EXPECT_FALSE(run.contains(m_base));
  // A sibling whose name starts with the root's name is not inside it.
  EXPECT_FALSE(run.contains(m_base / "runner" / "file"));
  EXPECT_FALSE(run.contains("../run2/samples/a.gif"));
}

TEST_F(RunDirectoryTest, ContainsFollowsSymlinks) {
  const RunDirectory run(m_base / "run");
  run.create();
  fs::create_directories(m_base / "outside");
  touch(m_base / "outside" / "secret.txt");
  fs::create_directory_symlink(m_base / "outside", run.samplesDir() / "escape");
  fs::create_symlink(m_base / "outside" / "secret.txt", run.samplesDir() / "secret.gif");
  fs::create_directory_symlink(run.checkpointsDir(), run.samplesDir() / "inner");

  EXPECT_FALSE(run.contains("samples/escape/secret.txt"));
  EXPECT_FALSE(run.contains("samples/escape/not_there.gif"));
  EXPECT_FALSE(run.contains("samples/secret.gif"));
  EXPECT_TRUE(run.contains("samples/inner/step_1"));
}

TEST_F(RunDirectoryTest, ContainsWorksWhenTheRootIsASymlink) {
  fs::create_directories(m_base / "real");
  fs::create_directory_symlink(m_base / "real", m_base / "link");
  const RunDirectory run(m_base / "link");
  EXPECT_TRUE(run.contains(m_base / "real" / "metrics.jsonl"));
  EXPECT_TRUE(run.contains("metrics.jsonl"));
  EXPECT_FALSE(run.contains(m_base / "link" / ".." / "x"));
}

TEST_F(RunDirectoryTest, ListCheckpointStepsKeepsOnlyCompleteFolders) {
  const RunDirectory run(m_base / "run");
  EXPECT_TRUE(run.listCheckpointSteps().empty());  // no checkpoints folder yet
  run.create();
  EXPECT_TRUE(run.listCheckpointSteps().empty());

  touch(run.checkpointDir(10) / checkpoint_files::kComplete);
  touch(run.checkpointDir(2) / checkpoint_files::kComplete);
  touch(run.checkpointDir(1000) / checkpoint_files::kComplete);
  touch(run.checkpointDir(0) / checkpoint_files::kComplete);
  touch(run.checkpointDir(5) / "model.safetensors");              // incomplete
  touch(run.checkpointTempDir(7) / checkpoint_files::kComplete);  // temporary
  touch(run.checkpointsDir() / "step_007" / checkpoint_files::kComplete);
  touch(run.checkpointsDir() / "step_abc" / checkpoint_files::kComplete);
  touch(run.checkpointsDir() / "step_" / checkpoint_files::kComplete);
  touch(run.checkpointsDir() / "step_-3" / checkpoint_files::kComplete);
  touch(run.checkpointsDir() / "step_99999999999999999999" / checkpoint_files::kComplete);
  touch(run.checkpointsDir() / "step_3");  // a file, not a folder
  fs::create_directories(run.checkpointDir(4) / checkpoint_files::kComplete);

  EXPECT_EQ(run.listCheckpointSteps(), (std::vector<std::int64_t>{0, 2, 10, 1000}));
}

}  // namespace
}  // namespace tb::core
