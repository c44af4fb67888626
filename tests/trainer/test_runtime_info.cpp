#include "core/version.h"
#include "test_support.h"
#include "trainer/cpu_features.h"
#include "trainer/event_sink.h"
#include "trainer/runtime_info.h"

#include <ATen/Version.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// The trainer's side of the golden file: what its sink writes for the golden events is the
// golden file itself, byte for byte, framing included.
TEST(TrainerEvents, SinkWritesTheGoldenLines) {
  const auto golden = goldenLines();
  ASSERT_EQ(golden.size(), std::variant_size_v<core::Event>);  // every type once
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

std::string fileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// After a full disk, events.jsonl ended inside a line and the resumed run's hello was glued to
// it. The unterminated line goes before anything is appended.
TEST(TrainerEvents, AnUnterminatedLastLineIsDroppedBeforeTheNextRunAppends) {
  const auto golden = goldenLines();
  testing::TempFolder tmp;
  const std::string file = tmp.file("events.jsonl");
  std::ofstream(file, std::ios::binary) << golden[0] << "\n"
                                        << golden[1] << "\n"
                                        << golden[2].substr(0, 20);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    EventSink sink(fds[1]);
    ASSERT_TRUE(sink.alsoAppendTo(file));
    ASSERT_TRUE(sink.emit(*core::decodeEventLine(golden[8]).event()));
  }
  ::close(fds[1]);
  ::close(fds[0]);
  EXPECT_EQ(fileText(file), golden[0] + "\n" + golden[1] + "\n" + golden[8] + "\n");
  // A file that is one unterminated line is emptied.
  std::ofstream(file, std::ios::binary) << golden[0].substr(0, 7);
  const int fd = ::open(file.c_str(), O_RDWR | O_APPEND);
  ASSERT_GE(fd, 0);
  dropUnterminatedLine(fd);
  ::close(fd);
  EXPECT_EQ(fileText(file), "");
}

// A write the disk cuts short is taken back: here the file size limit stops it mid-line, as a
// full disk does.
TEST(TrainerEvents, ALineTheDiskCutsShortIsTakenBack) {
  const auto golden = goldenLines();
  testing::TempFolder tmp;
  const std::string file = tmp.file("events.jsonl");
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(appendWholeLines(fd, golden[0] + "\n"));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit tight = saved;
  tight.rlim_cur = golden[0].size() + 1 + 10;  // room for 10 bytes of the next line
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tight), 0);
  const bool written = appendWholeLines(fd, golden[1] + "\n");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  ::close(fd);
  EXPECT_FALSE(written);
  EXPECT_EQ(fileText(file), golden[0] + "\n");
}

TEST(RuntimeInfo, ReportsTorchVersionAndLoadedBlas) {
  const RuntimeInfo rt = queryRuntime();
  EXPECT_EQ(rt.torch_version.rfind("1.", 0) == 0 || rt.torch_version.rfind("2.", 0) == 0, true)
      << rt.torch_version;
  // Debian's LibTorch calls whichever libblas.so.3 is loaded; the PyTorch wheels carry MKL inside
  // libtorch_cpu (a libblas that OpenCV loads beside it is not what LibTorch calls).
  if (at::show_config().find("BLAS_INFO=mkl") != std::string::npos) {
    EXPECT_EQ(rt.blas, "mkl (inside LibTorch)");
  } else {
    EXPECT_FALSE(loadedBlasLibrary().empty());
  }
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
  EXPECT_EQ(h.cpu, cpuFeatures().summary());
}

// The flags of /proc/cpuinfo's first processor.
std::string cpuinfoFlags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) return line + " ";
  return {};
}

TEST(CpuFeatures, UnitsAreTheKernelsFlagsAndOneDnnNamesItsInstructionSet) {
  const std::string flags = cpuinfoFlags();
  if (flags.empty()) GTEST_SKIP() << "no /proc/cpuinfo flags here";
  const CpuFeatures& cpu = cpuFeatures();
  EXPECT_EQ(cpu.avx2, flags.find(" avx2 ") != std::string::npos);
  EXPECT_EQ(cpu.avx512, flags.find(" avx512f ") != std::string::npos);
  EXPECT_EQ(cpu.avx512_bf16, flags.find(" avx512_bf16 ") != std::string::npos);
  EXPECT_EQ(cpu.amx_bf16, flags.find(" amx_bf16 ") != std::string::npos);
  EXPECT_EQ(cpu.units().find("AMX-BF16") != std::string::npos, cpu.amx_bf16) << cpu.units();
  // LibTorch runs CPU convolutions with oneDNN, which says what it dispatches to: an AVX-512
  // machine's line names AVX-512, an AMX machine's AMX.
  ASSERT_FALSE(cpu.onednn_isa.empty());
  if (cpu.avx512) {
    EXPECT_NE(cpu.onednn_isa.find("AVX-512"), std::string::npos) << cpu.onednn_isa;
  }
  if (cpu.amx_bf16) {
    EXPECT_NE(cpu.onednn_isa.find("AMX"), std::string::npos) << cpu.onednn_isa;
  }
  EXPECT_NE(cpu.summary().find("(oneDNN: " + cpu.onednn_isa + ")"), std::string::npos);
}

TEST(CpuFeatures, OneDnnVerboseCatchesTheKernelsAndGivesStandardOutputBack) {
  struct stat before {};
  ASSERT_EQ(::fstat(STDOUT_FILENO, &before), 0);
  std::vector<std::string> lines;
  {
    OneDnnVerbose verbose;
    torch::NoGradGuard no_grad;
    (void)torch::conv3d(torch::ones({2, 4, 5, 8, 8}), torch::ones({4, 4, 3, 3, 3}));
    lines = verbose.finish();
    EXPECT_TRUE(verbose.finish().empty());  // once
  }
  int convolutions = 0;
  for (const auto& line : lines) {
    OneDnnExec exec;
    if (parseOneDnnExec(line, exec) && exec.kind == "convolution") {
      ++convolutions;
      EXPECT_FALSE(exec.implementation.empty()) << line;
      EXPECT_GE(exec.ms, 0) << line;
    }
  }
  EXPECT_GE(convolutions, 1) << lines.size() << " lines";
  struct stat after {};
  ASSERT_EQ(::fstat(STDOUT_FILENO, &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_dev, after.st_dev);
}

TEST(CpuFeatures, ReadsTheExecLinesOfOneDnn2And3) {
  OneDnnExec e;
  ASSERT_TRUE(parseOneDnnExec(
      "onednn_verbose,exec,cpu,convolution,jit:avx512_core,backward_weights,src_f32::blocked:"
      "aBcde16b:f0 dst_f32::blocked:aBcde16b:f0,,alg:convolution_direct,mb2_ic32oc32_id17od17,"
      "1.25",
      e));
  EXPECT_EQ(e.kind, "convolution");
  EXPECT_EQ(e.implementation, "jit:avx512_core");
  EXPECT_EQ(e.propagation, "backward_weights");
  EXPECT_DOUBLE_EQ(e.ms, 1.25);
  ASSERT_TRUE(parseOneDnnExec(
      "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,src:f32::blocked:abcde::f0 "
      "dst:bf16::blocked:aBcde16b::f0,,,2x32x17x64x64,0.5",
      e));
  EXPECT_EQ(e.kind, "reorder");
  EXPECT_EQ(e.implementation, "jit:uni");
  EXPECT_DOUBLE_EQ(e.ms, 0.5);
  EXPECT_FALSE(parseOneDnnExec("onednn_verbose,info,cpu,isa:Intel AVX-512", e));
  EXPECT_FALSE(parseOneDnnExec("exec,cpu,convolution,jit,forward,1.0", e));  // not oneDNN's
  EXPECT_FALSE(parseOneDnnExec("onednn_verbose,exec,cpu,convolution,jit,forward,x", e));
}

}  // namespace
}  // namespace tb::trainer
