#include "core/metrics_log.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tb::core {
namespace {
namespace fs = std::filesystem;

class MetricsLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "tb_metrics_log_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_dir = pattern;
    m_file = m_dir / "metrics.jsonl";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }

  // Raw bytes, as another process (or a Python tool) would write them.
  static void writeRaw(const fs::path& file, const std::string& bytes, bool append = true) {
    std::ofstream out(file, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
    out << bytes;
  }

  static MetricsRow row(std::int64_t step) {
    return MetricsRow{step,
                      1733140000.0 + static_cast<double>(step) * 0.5,
                      {{"train/recon_loss", 1.0 / static_cast<double>(step + 1)},
                       {"train/step_squared", static_cast<double>(step * step)}}};
  }

  static std::string lines(std::int64_t first, std::int64_t count) {
    std::string out;
    for (std::int64_t s = first; s < first + count; ++s) out += formatMetricsLine(row(s)) + "\n";
    return out;
  }

  static std::vector<std::int64_t> steps(const std::vector<MetricsRow>& rows) {
    std::vector<std::int64_t> out;
    for (const MetricsRow& r : rows) out.push_back(r.step);
    return out;
  }

  static std::vector<std::int64_t> range(std::int64_t first, std::int64_t count) {
    std::vector<std::int64_t> out;
    for (std::int64_t s = first; s < first + count; ++s) out.push_back(s);
    return out;
  }

  fs::path m_dir;
  fs::path m_file;
};

TEST_F(MetricsLogTest, FormatWritesStepWallTimeThenValuesWithNullForNonFinite) {
  const MetricsRow r{120,
                     1733140000.5,
                     {{"train/recon_loss", 0.071},
                      {"val/psnr", std::numeric_limits<double>::quiet_NaN()},
                      {"train/grad_norm", std::numeric_limits<double>::infinity()}}};
  EXPECT_EQ(formatMetricsLine(r),
            R"({"step":120,"wall_time":1733140000.5,"train/recon_loss":0.071,"val/psnr":null,)"
            R"("train/grad_norm":null})");
  EXPECT_THROW(formatMetricsLine(MetricsRow{1, 0.0, {{"step", 2.0}}}), std::invalid_argument);
  EXPECT_THROW(formatMetricsLine(MetricsRow{1, 0.0, {{"wall_time", 2.0}}}), std::invalid_argument);
}

TEST_F(MetricsLogTest, ParseIsLenientAboutValuesButNeedsAnIntegerStep) {
  const auto parsed =
      parseMetricsLine(R"({"wall_time":5.5,"note":"hi","ok":true,"loss":0.25,"step":7,"x":null})"
                       "\r");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->step, 7);
  EXPECT_DOUBLE_EQ(parsed->wall_time, 5.5);
  ASSERT_EQ(parsed->values.size(), 2u);
  EXPECT_EQ(parsed->values[0].first, "loss");
  EXPECT_DOUBLE_EQ(parsed->values[0].second, 0.25);
  EXPECT_EQ(parsed->values[1].first, "x");
  EXPECT_TRUE(std::isnan(parsed->values[1].second));

  const auto noWallTime = parseMetricsLine(R"({"step":3})");
  ASSERT_TRUE(noWallTime.has_value());
  EXPECT_TRUE(std::isnan(noWallTime->wall_time));

  for (const std::string& bad : std::vector<std::string>{
           "", "garbage", "[]", "null", R"({"loss":1})", R"({"step":"1"})", R"({"step":1.5})",
           R"({"step":null})", R"({"step":18446744073709551615})", R"({"step":1)",
           std::string(100, '{'), std::string("{\"step\":1,\"k\":\"\xff\"}")}) {
    EXPECT_FALSE(parseMetricsLine(bad).has_value()) << bad;
  }
}

TEST_F(MetricsLogTest, WriterAndFollowerRoundTripIncludingNaN) {
  {
    MetricsWriter writer(m_file);
    writer.append(row(0));
    writer.append(MetricsRow{1, 2.5, {{"a", std::nan("")}, {"b", -1.25}}});
  }
  MetricsFollower follower(m_file);
  const std::vector<MetricsRow> rows = follower.poll();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, 0);
  EXPECT_DOUBLE_EQ(rows[0].wall_time, 1733140000.0);
  ASSERT_EQ(rows[0].values.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].values[0].second, 1.0);
  EXPECT_EQ(rows[1].step, 1);
  ASSERT_EQ(rows[1].values.size(), 2u);
  EXPECT_EQ(rows[1].values[0].first, "a");
  EXPECT_TRUE(std::isnan(rows[1].values[0].second));
  EXPECT_DOUBLE_EQ(rows[1].values[1].second, -1.25);
  EXPECT_TRUE(follower.poll().empty());

  // Appending again (a resumed run) continues the file.
  MetricsWriter writer(m_file);
  writer.append(row(2));
  EXPECT_EQ(steps(follower.poll()), std::vector<std::int64_t>{2});
  EXPECT_EQ(follower.resets(), 0u);
  EXPECT_EQ(follower.malformedLines(), 0u);
}

TEST_F(MetricsLogTest, WriterStartsANewLineAfterATornLastLine) {
  writeRaw(m_file, lines(0, 1) + R"({"step":1,"wall_ti)");
  {
    MetricsWriter writer(m_file);
    writer.append(row(2));
  }
  MetricsFollower follower(m_file);
  EXPECT_EQ(steps(follower.poll()), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(follower.malformedLines(), 1u);
}

TEST_F(MetricsLogTest, WriterReportsPathAndReasonOnFailure) {
  try {
    MetricsWriter writer(m_dir / "no_such_folder" / "metrics.jsonl");
    FAIL() << "opening should have thrown";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no_such_folder"), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }

  if (!fs::exists("/dev/full")) GTEST_SKIP() << "/dev/full is not available";
  MetricsWriter full("/dev/full");
  try {
    full.append(row(1));
    FAIL() << "writing to /dev/full should have thrown";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/dev/full"), std::string::npos) << what;
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
  }
}

// A disk that takes only part of a row (full, or a file size limit) used to leave the file
// ending mid-row; the row is now taken back whole, and the next one starts a line of its own.
TEST_F(MetricsLogTest, ARowTheDiskTakesOnlyPartOfIsTakenBackWhole) {
  MetricsWriter writer(m_file);
  writer.append(row(0));
  const auto size = fs::file_size(m_file);
  // RLIMIT_FSIZE 10 bytes past the end: write() stores 10 bytes of the next row and stops.
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limited = old;
  limited.rlim_cur = static_cast<rlim_t>(size + 10);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  std::string error;
  try {
    writer.append(row(1));
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_NE(error.find("cannot write metrics file " + m_file.string()), std::string::npos) << error;
  EXPECT_EQ(fs::file_size(m_file), size);  // not 10 bytes of a row
  writer.append(row(2));
  MetricsFollower follower(m_file);
  EXPECT_EQ(steps(follower.poll()), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(follower.malformedLines(), 0u);
}

TEST_F(MetricsLogTest, WriterThrowsAfterClose) {
  MetricsWriter writer(m_file);
  writer.append(row(0));
  writer.close();
  EXPECT_THROW(writer.append(row(1)), std::runtime_error);
  MetricsWriter moved = std::move(writer);
  EXPECT_THROW(moved.append(row(1)), std::runtime_error);
}

TEST_F(MetricsLogTest, FollowerWaitsForTheFileAndForPartialLines) {
  MetricsFollower follower(m_file);
  EXPECT_TRUE(follower.poll().empty());
  EXPECT_EQ(follower.resets(), 0u);

  const std::string two = lines(0, 2);
  writeRaw(m_file, two.substr(0, two.size() - 5));
  EXPECT_EQ(steps(follower.poll()), std::vector<std::int64_t>{0});
  EXPECT_TRUE(follower.poll().empty());
  writeRaw(m_file, two.substr(two.size() - 5, 4));
  EXPECT_TRUE(follower.poll().empty());  // still no '\n'
  writeRaw(m_file, "\n");
  EXPECT_EQ(steps(follower.poll()), std::vector<std::int64_t>{1});
  EXPECT_EQ(follower.offset(), two.size());
  EXPECT_EQ(follower.resets(), 0u);
}

TEST_F(MetricsLogTest, FollowerGetsEveryRowInOrderWhileAWriterAppendsInRandomChunks) {
  constexpr std::int64_t kRows = 2000;
  const std::string all = lines(0, kRows);
  std::atomic<bool> writerDone{false};

  std::thread writer([&] {
    std::FILE* file = std::fopen(m_file.c_str(), "ab");
    ASSERT_NE(file, nullptr);
    std::mt19937 rng(42);
    std::size_t pos = 0;
    int writes = 0;
    while (pos < all.size()) {
      // 1..300 bytes: most writes end mid-line, some split a line into several pieces.
      const std::size_t n = std::min<std::size_t>(1 + rng() % 300, all.size() - pos);
      std::fwrite(all.data() + pos, 1, n, file);
      std::fflush(file);
      pos += n;
      if (++writes % 16 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::fclose(file);
    writerDone = true;
  });

  MetricsFollower follower(m_file);
  std::vector<MetricsRow> got;
  int polls = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (static_cast<std::int64_t>(got.size()) < kRows &&
         std::chrono::steady_clock::now() < deadline) {
    const bool finished = writerDone.load();
    for (MetricsRow& r : follower.poll()) got.push_back(std::move(r));
    ++polls;
    if (finished) break;  // this poll started after the last write: nothing more will come
  }
  writer.join();

  ASSERT_EQ(got.size(), static_cast<std::size_t>(kRows)) << "after " << polls << " polls";
  for (std::int64_t s = 0; s < kRows; ++s) {
    const MetricsRow expected = row(s);
    ASSERT_EQ(got[s].step, s);
    ASSERT_DOUBLE_EQ(got[s].wall_time, expected.wall_time);
    ASSERT_EQ(got[s].values.size(), 2u);
    ASSERT_DOUBLE_EQ(got[s].values[0].second, expected.values[0].second);
    ASSERT_DOUBLE_EQ(got[s].values[1].second, expected.values[1].second);
  }
  EXPECT_EQ(follower.malformedLines(), 0u);
  EXPECT_EQ(follower.resets(), 0u);
  EXPECT_GT(polls, 1);
}

TEST_F(MetricsLogTest, FollowerRestartsAfterTruncation) {
  writeRaw(m_file, lines(0, 5));
  MetricsFollower follower(m_file);
  EXPECT_EQ(steps(follower.poll()), range(0, 5));

  // Truncated and restarted with fewer rows: the file is now shorter than what was read.
  writeRaw(m_file, lines(100, 2), /*append=*/false);
  EXPECT_EQ(steps(follower.poll()), range(100, 2));
  EXPECT_EQ(follower.resets(), 1u);

  // Truncated and rewritten longer than before between two polls: the first bytes changed.
  writeRaw(m_file, lines(200, 8), /*append=*/false);
  EXPECT_EQ(steps(follower.poll()), range(200, 8));
  EXPECT_EQ(follower.resets(), 2u);

  // Truncated to nothing: no rows, and the next rows are read from the start.
  writeRaw(m_file, "", /*append=*/false);
  EXPECT_TRUE(follower.poll().empty());
  EXPECT_EQ(follower.resets(), 3u);
  writeRaw(m_file, lines(300, 1));
  EXPECT_EQ(steps(follower.poll()), range(300, 1));
  EXPECT_EQ(follower.resets(), 3u);
}

TEST_F(MetricsLogTest, FollowerRestartsWhenTheFileIsReplaced) {
  writeRaw(m_file, lines(0, 3));
  MetricsFollower follower(m_file);
  EXPECT_EQ(steps(follower.poll()), range(0, 3));

  // Same bytes, same size, another inode (rotation by rename): only the identity tells.
  const fs::path replacement = m_dir / "metrics.jsonl.new";
  writeRaw(replacement, lines(0, 3));
  fs::rename(replacement, m_file);
  EXPECT_EQ(steps(follower.poll()), range(0, 3));
  EXPECT_EQ(follower.resets(), 1u);
  EXPECT_TRUE(follower.poll().empty());
  EXPECT_EQ(follower.resets(), 1u);

  // Deleted: nothing to read, and no reset until a new file appears.
  fs::remove(m_file);
  EXPECT_TRUE(follower.poll().empty());
  EXPECT_EQ(follower.resets(), 1u);
  writeRaw(replacement, lines(50, 2));
  fs::rename(replacement, m_file);
  EXPECT_EQ(steps(follower.poll()), range(50, 2));
  EXPECT_EQ(follower.resets(), 2u);
}

TEST_F(MetricsLogTest, FollowerSkipsAndCountsMalformedLines) {
  writeRaw(m_file, lines(0, 1) +
                       "garbage\n[]\n{\"loss\":1}\n{\"step\":\"1\"}\n{\"step\":1.5}\n\n  \r\n" +
                       std::string("\xff\xfe\n") + lines(1, 1));
  MetricsFollower follower(m_file);
  EXPECT_EQ(steps(follower.poll()), range(0, 2));
  EXPECT_EQ(follower.malformedLines(), 6u);  // blank lines are not counted

  // A line over the cap is counted once and does not stop the rows after it.
  writeRaw(m_file, std::string(kMaxMetricsLineBytes + 10, 'x') + "\n" + lines(2, 1));
  EXPECT_EQ(steps(follower.poll()), range(2, 1));
  EXPECT_EQ(follower.malformedLines(), 7u);
  EXPECT_EQ(follower.resets(), 0u);
}

}  // namespace
}  // namespace tb::core
