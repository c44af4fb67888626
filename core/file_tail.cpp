#include "core/file_tail.h"

#include "core/posix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <exception>
#include <string_view>

namespace tb::core {
namespace {

constexpr std::size_t kHeadBytes = 256;
constexpr std::size_t kReadChunkBytes = 64 * 1024;

bool isBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

FileTail::FileTail(std::filesystem::path path, std::size_t maxLineBytes)
    : m_path(std::move(path)), m_maxLineBytes(maxLineBytes), m_splitter(maxLineBytes) {}

void FileTail::restart() {
  m_splitter = EventLineSplitter(m_maxLineBytes);
  m_offset = 0;
  m_head.clear();
  ++m_resets;
}

FileTail::Result FileTail::poll() {
  Result result;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. Open
    // first and fstat the descriptor: stat() on the path could describe a different file than
    // the one read if it is replaced in between.
    FileDescriptor fd(::open(m_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) return result;  // absent (yet) or unreadable: nothing new this time
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return result;
    const auto device = static_cast<std::uint64_t>(st.st_dev);
    const auto inode = static_cast<std::uint64_t>(st.st_ino);
    const auto size = static_cast<std::uint64_t>(st.st_size);

    bool restarted = false;
    if (m_haveIdentity && (device != m_device || inode != m_inode)) {
      restarted = true;  // replaced or rotated
    } else if (size < m_offset) {
      restarted = true;  // truncated
    } else if (!m_head.empty()) {
      std::string head(m_head.size(), '\0');
      restarted =
          readAt(fd.get(), head.data(), head.size(), 0) != static_cast<ssize_t>(head.size()) ||
          head != m_head;  // rewritten in place
    }
    if (restarted) {
      restart();
      result.restarted = true;
    }
    m_haveIdentity = true;
    m_device = device;
    m_inode = inode;

    std::string chunk(kReadChunkBytes, '\0');
    for (;;) {
      const ssize_t n = readAt(fd.get(), chunk.data(), chunk.size(), m_offset);
      if (n <= 0) break;  // end of file, or an error to retry at the next poll
      const std::string_view bytes(chunk.data(), static_cast<std::size_t>(n));
      if (m_head.size() < kHeadBytes) m_head.append(bytes.substr(0, kHeadBytes - m_head.size()));
      m_offset += static_cast<std::uint64_t>(n);
      for (EventLineSplitter::Line& line : m_splitter.feed(bytes)) {
        if (line.oversized) {
          ++result.oversized;
        } else if (!isBlank(line.text)) {
          result.lines.push_back(std::move(line.text));
        }
      }
    }
  } catch (const std::exception&) {
    // bad_alloc is the only candidate; keep what was read, the offset stays consistent.
  }
  return result;
}

}  // namespace tb::core
