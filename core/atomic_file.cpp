#include "core/atomic_file.h"

#include "core/posix_io.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace tb::core {
namespace {

namespace fs = std::filesystem;

std::string systemError(int error) { return std::strerror(error); }

// Writes every byte to a new file (O_EXCL: never through someone else's), fsynced when asked.
void writeNewFile(const fs::path& path, std::string_view bytes, int flags, bool sync,
                  const fs::path& named) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644));
  if (!fd.valid())
    throw FileWriteError(named, "cannot create " + path.string() + ": " + systemError(errno));
  if (!writeAll(fd.get(), bytes))
    throw FileWriteError(named, "write failed: " + systemError(errno));
  if (sync && ::fsync(fd.get()) != 0)
    throw FileWriteError(named, "fsync failed: " + systemError(errno));
  if (!fd.close()) throw FileWriteError(named, "close failed: " + systemError(errno));
}

}  // namespace

AtomicFile::AtomicFile(fs::path target) : m_target(std::move(target)) {
  static std::atomic<unsigned> counter{0};
  const std::string name = "." + m_target.filename().string() + ".tmp-" +
                           std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  const fs::path folder = m_target.parent_path();
  m_temp = folder.empty() ? fs::path(name) : folder / name;
}

AtomicFile::~AtomicFile() {
  if (!m_committed) {
    std::error_code ec;
    fs::remove(m_temp, ec);
  }
}

void AtomicFile::commit(Durability durability) {
  if (durability == Durability::Durable) syncPath(m_temp);
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) {
    throw FileWriteError(m_target,
                         "cannot rename " + m_temp.string() + " into place: " + systemError(errno));
  }
  m_committed = true;
  if (durability == Durability::Durable) {
    // Without this the rename itself may not survive a crash.
    syncPath(m_target.has_parent_path() ? m_target.parent_path() : fs::path("."));
  }
}

void writeFileAtomically(const fs::path& target, std::string_view bytes, Durability durability) {
  AtomicFile file(target);
  writeNewFile(file.tempPath(), bytes, O_EXCL, /*sync=*/false, target);
  file.commit(durability);
}

void writeFileSynced(const fs::path& path, std::string_view bytes) {
  writeNewFile(path, bytes, O_TRUNC, /*sync=*/true, path);
}

void syncPath(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileWriteError(path, "cannot open to sync: " + systemError(errno));
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // EINVAL: a folder on a file system that cannot sync folders (some network ones).
  if (rc != 0 && !(error == EINVAL && fs::is_directory(path))) {
    throw FileWriteError(path, "fsync failed: " + systemError(error));
  }
}

}  // namespace tb::core
