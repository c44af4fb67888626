#include "core/version.h"
#include "trainer/event_sink.h"
#include "trainer/runtime_info.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace tb::trainer {
namespace {

std::vector<std::string> goldenLines() {
  std::ifstream in(std::string(TB_TEST_DATA_DIR) + "/golden/events_v1.ndjson");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string readAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// The trainer's side of the golden file: what its sink writes for the golden events is the
// golden file itself, byte for byte, framing included.
TEST(TrainerEvents, SinkWritesTheGoldenLines) {
  const auto golden = goldenLines();
  ASSERT_EQ(golden.size(), 9u);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    EventSink sink(fds[1]);
    for (const auto& line : golden) {
      const auto decoded = core::decodeEventLine(line);
      ASSERT_TRUE(decoded.ok()) << line;
      ASSERT_TRUE(sink.emit(*decoded.event()));
    }
    ::close(fds[1]);
  }
  std::string expected;
  for (const auto& line : golden) expected += line + "\n";
  EXPECT_EQ(readAll(fds[0]), expected);
  ::close(fds[0]);
}

TEST(TrainerEvents, DisabledSinkWritesNothing) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  EventSink sink(fds[1], /*enabled=*/false);
  EXPECT_TRUE(sink.emit(core::LogEvent{"info", "rank 1 says nothing"}));
  ::close(fds[1]);
  EXPECT_EQ(readAll(fds[0]), "");
  ::close(fds[0]);
}

TEST(TrainerEvents, ClosedReaderIsReportedNotFatal) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);
  signal(SIGPIPE, SIG_IGN);
  EventSink sink(fds[1]);
  EXPECT_FALSE(sink.emit(core::LogEvent{"info", "nobody listens"}));
  ::close(fds[1]);
}

TEST(RuntimeInfo, ReportsTorchVersionAndLoadedBlas) {
  const RuntimeInfo rt = queryRuntime();
  EXPECT_EQ(rt.torch_version.rfind("1.", 0) == 0 || rt.torch_version.rfind("2.", 0) == 0, true)
      << rt.torch_version;
  // LibTorch links BLAS, so some BLAS library is loaded in this process.
  EXPECT_FALSE(loadedBlasLibrary().empty());
  EXPECT_NE(rt.blas, "none found");
  EXPECT_GE(rt.threads, 1);
  const auto hello = makeHelloEvent(rt, 2, "local", "/runs/x");
  const auto line = core::encodeEvent(hello);
  const auto back = core::decodeEventLine(line);
  ASSERT_TRUE(back.ok()) << line;
  const auto& h = std::get<core::HelloEvent>(*back.event());
  EXPECT_EQ(h.world_size, 2);
  EXPECT_EQ(h.protocol, core::kProtocolVersion);
  EXPECT_EQ(h.blas, rt.blas);
}

}  // namespace
}  // namespace tb::trainer
