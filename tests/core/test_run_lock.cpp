// core::RunLock and isRunLocked: one trainer per run directory, the holder named, the lock gone
// with its holder.
#include "core/run_lock.h"

#include <gtest/gtest.h>

#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace tb::core {
namespace {

namespace fs = std::filesystem;

struct Folder {
  Folder() : path(fs::temp_directory_path() / ("tb_run_lock_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  fs::path path;
};

TEST(RunLock, ASecondLockIsRefusedNamingTheDirectoryAndTheHoldersPid) {
  Folder run;
  const fs::path file = run.path / ".lock";
  EXPECT_FALSE(isRunLocked(file));  // no file yet
  {
    RunLock held(file);
    EXPECT_TRUE(isRunLocked(file));
    try {
      RunLock second(file);
      FAIL() << "a second lock was granted";
    } catch (const RunLockedError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(run.path.string()), std::string::npos) << what;
      EXPECT_NE(what.find("(pid " + std::to_string(::getpid()) + ")"), std::string::npos) << what;
    }
  }
  EXPECT_FALSE(isRunLocked(file));
  EXPECT_NO_THROW(RunLock again(file));
}

TEST(RunLock, ALockWhoseHolderDiedIsFree) {
  Folder run;
  const fs::path file = run.path / ".lock";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RunLock held(file);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_TRUE(isRunLocked(file));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_FALSE(isRunLocked(file));
  EXPECT_NO_THROW(RunLock taken(file));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(RunLock, AnUncreatableLockFileIsNamed) {
  const fs::path file = "/nonexistent-tokenbench-dir/.lock";
  try {
    RunLock lock(file);
    FAIL() << "locked a file in a missing folder";
  } catch (const RunLockedError&) {
    FAIL() << "reported as locked";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tb::core
