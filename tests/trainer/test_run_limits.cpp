// What a run refuses before it writes anything: settings that validate on any machine but
// cannot run on this one (train.threads = 1024 on 2 cores climbed past 1,900 threads without a
// step), and run directories whose files would be written through planted links or that are
// someone else's folder.
#include "tests/trainer/test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace tb::trainer {
namespace {

TEST(RunLimits, MoreThanFourThreadsPerCoreAreRefusedNamingTheKey) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  core::RunConfig config = testing::tinyConfig();
  config.train.max_steps = 1;
  config.train.threads = 4 * cores + 1;
  const auto dir = testing::freshDir("threads");
  const testing::RunResult r = testing::train(config, dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(testing::errorEventOf(r),
            "config_invalid: train.threads: " + std::to_string(4 * cores + 1) +
                " is more than 4 per core of this machine (" + std::to_string(cores) +
                " cores: at most " + std::to_string(4 * cores) + ")");
  config.train.threads = 4 * cores;  // the limit itself runs
  EXPECT_EQ(testing::train(config, testing::freshDir("threads_ok")).code, 0);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(testing::freshDir("threads_ok"));
}

std::string contentOf(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RunLimits, PlantedLinksInANewRunDirectoryAreRefusedNotFollowed) {
  namespace fs = std::filesystem;
  core::RunConfig config = testing::tinyConfig();
  config.train.max_steps = 1;
  const fs::path outside = testing::freshDir("outside");
  fs::create_directories(outside);
  std::ofstream(outside / "precious.txt") << "keep me\n";
  for (const char* entry : {"events.jsonl", ".lock", "logs", "checkpoints", "samples"}) {
    SCOPED_TRACE(entry);
    const fs::path dir = testing::freshDir("planted");
    fs::create_directories(dir);
    const bool folder = std::string(entry).find('.') == std::string::npos;
    if (folder)
      fs::create_directory_symlink(outside, dir / entry);
    else
      fs::create_symlink(outside / "precious.txt", dir / entry);
    const testing::RunResult r = testing::train(config, dir);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(testing::errorEventOf(r),
              "run_dir_invalid: " + (dir / entry).string() +
                  " is a symbolic link: a run writes its files and folders in place, never "
                  "through a link");
    EXPECT_EQ(contentOf(outside / "precious.txt"), "keep me\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(outside), fs::directory_iterator()), 1);
    fs::remove_all(dir);
  }
  fs::remove_all(outside);
}

TEST(RunLimits, AFolderOfOtherFilesIsNoRunDirectory) {
  namespace fs = std::filesystem;
  const fs::path dir = testing::freshDir("videos");
  fs::create_directories(dir);
  std::ofstream(dir / "holiday.mp4") << "not really a video";
  core::RunConfig config = testing::tinyConfig();
  config.train.max_steps = 1;
  const testing::RunResult r = testing::train(config, dir);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(testing::errorEventOf(r).rfind(
                "run_dir_invalid: " + dir.string() + " holds files, none of them a run's", 0),
            0u)
      << testing::errorEventOf(r);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb::trainer
