// core::AtomicFile and friends: a reader sees the old file or the whole new one, a failure names
// the file and leaves the old one, and no temporary is left behind.
#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <iterator>

namespace tb::core {
namespace {

namespace fs = std::filesystem;

struct Folder {
  Folder() : path(fs::temp_directory_path() / ("tb_atomic_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  fs::path path;
};

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::size_t entries(const fs::path& folder) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

TEST(AtomicFile, ReplacesTheWholeFileAndLeavesNoTemporary) {
  Folder dir;
  const fs::path file = dir.path / "config.json";
  writeFileAtomically(file, "old");
  // The file being replaced stays open for reading, as the window would hold it: the reader keeps
  // the old bytes (a new inode), never a mixture.
  std::ifstream reader(file, std::ios::binary);
  writeFileAtomically(file, std::string(100000, 'n'), Durability::Visible);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(reader), std::istreambuf_iterator<char>()),
            "old");
  EXPECT_EQ(slurp(file), std::string(100000, 'n'));
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(AtomicFile, WithoutCommitTheTargetIsUntouchedAndTheTemporaryRemoved) {
  Folder dir;
  const fs::path file = dir.path / "state.json";
  writeFileAtomically(file, "kept");
  {
    AtomicFile pending(file);
    EXPECT_EQ(pending.tempPath().parent_path(), dir.path);
    std::ofstream(pending.tempPath()) << "half";
    EXPECT_EQ(entries(dir.path), 2u);
  }
  EXPECT_EQ(slurp(file), "kept");
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(AtomicFile, AFailedRenameNamesTheFileKeepsWhatWasThereAndRemovesTheTemporary) {
  // A folder in the file's place cannot be replaced by a file (root included).
  Folder dir;
  const fs::path target = dir.path / "metrics.json";
  fs::create_directories(target / "inside");
  try {
    writeFileAtomically(target, "after");
    ADD_FAILURE() << "replaced a folder with a file";
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.path(), target);
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_EQ(entries(dir.path), 1u) << "the temporary was left behind";
}

TEST(AtomicFile, AFullDiskIsAnErrorNamingTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    writeFileSynced("/dev/full", "x");
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const FileWriteError& e) {
    EXPECT_EQ(e.path(), fs::path("/dev/full"));
    EXPECT_NE(e.reason().find("No space left"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tb::core
