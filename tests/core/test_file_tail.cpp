#include "core/file_tail.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace tb::core {
namespace {
namespace fs = std::filesystem;

class FileTailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tb_file_tail_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  void append(const fs::path& file, const std::string& bytes) {
    std::ofstream(file, std::ios::app | std::ios::binary) << bytes;
  }
  fs::path m_dir;
};

using Lines = std::vector<std::string>;

TEST_F(FileTailTest, ReadsWholeLinesOnceAndKeepsThePartialOne) {
  const fs::path file = m_dir / "events.jsonl";
  FileTail tail(file);
  EXPECT_TRUE(tail.poll().lines.empty());  // absent yet
  append(file, "one\n\n  \ntwo\nthr");
  FileTail::Result first = tail.poll();
  EXPECT_EQ(first.lines, (Lines{"one", "two"}));
  EXPECT_FALSE(first.restarted);
  append(file, "ee\n");
  EXPECT_EQ(tail.poll().lines, (Lines{"three"}));
  EXPECT_TRUE(tail.poll().lines.empty());
  EXPECT_EQ(tail.offset(), 18u);
}

TEST_F(FileTailTest, StartsOverWhenTheFileIsTruncatedOrReplaced) {
  const fs::path file = m_dir / "metrics.jsonl";
  FileTail tail(file);
  append(file, "a\nb\n");
  EXPECT_EQ(tail.poll().lines, (Lines{"a", "b"}));
  fs::resize_file(file, 0);
  append(file, "c\n");
  FileTail::Result truncated = tail.poll();
  EXPECT_TRUE(truncated.restarted);
  EXPECT_EQ(truncated.lines, (Lines{"c"}));
  const fs::path other = m_dir / "other";
  append(other, "d\ne\n");
  fs::rename(other, file);
  FileTail::Result replaced = tail.poll();
  EXPECT_TRUE(replaced.restarted);
  EXPECT_EQ(replaced.lines, (Lines{"d", "e"}));
  EXPECT_EQ(tail.resets(), 2u);
}

TEST_F(FileTailTest, CountsOversizedLinesAndDropsThem) {
  const fs::path file = m_dir / "events.jsonl";
  FileTail tail(file, 8);
  append(file, "short\n" + std::string(20, 'x') + "\nok\n");
  FileTail::Result result = tail.poll();
  EXPECT_EQ(result.lines, (Lines{"short", "ok"}));
  EXPECT_EQ(result.oversized, 1u);
}

// A FIFO nobody writes (a hostile or broken run directory): opening it for reading would wait
// for a writer forever; the tail reads it as absent, at once.
TEST_F(FileTailTest, AFifoNobodyWritesReadsAsAbsentWithoutWaiting) {
  const fs::path fifo = m_dir / "metrics.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  FileTail tail(fifo);
  const auto start = std::chrono::steady_clock::now();
  const FileTail::Result result = tail.poll();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(result.lines.empty());
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

}  // namespace
}  // namespace tb::core
