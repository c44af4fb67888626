#pragma once
// Tailing a line-oriented file that another process appends to (metrics.jsonl, events.jsonl),
// locally or over a network file system, by polling: what every follower of a run directory
// reads through.

#include "core/event_protocol.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tb::core {

/// Each poll() reads only what was appended since the last one and returns the complete lines;
/// a partial last line waits for its '\n'. Detects truncation (file shorter than what was read),
/// replacement or rotation (another inode), and rewrites that change the first bytes already
/// read; in each case it starts again from the beginning, counts a reset and says so, and the
/// caller should drop what it had. Never blocks on a file that is not a regular file (a FIFO
/// nobody writes, a device): such a path reads as absent. Never throws on I/O errors.
class FileTail {
 public:
  struct Result {
    std::vector<std::string> lines;  ///< complete lines without '\n', blank lines left out
    std::size_t oversized = 0;       ///< lines longer than the cap, dropped
    bool restarted = false;          ///< the file started over; `lines` are from its beginning
  };

  /// `maxLineBytes`: longest line kept (see EventLineSplitter).
  explicit FileTail(std::filesystem::path path, std::size_t maxLineBytes = kMaxEventLineBytes);

  /// New complete lines, in file order; nothing when the file does not exist (yet), cannot be
  /// opened or is not a regular file.
  Result poll();

  /// Times reading started over (truncation, replacement, rewrite).
  std::size_t resets() const { return m_resets; }
  /// Bytes consumed from the current file, partial line included.
  std::uint64_t offset() const { return m_offset; }
  const std::filesystem::path& path() const { return m_path; }

 private:
  void restart();

  std::filesystem::path m_path;
  std::size_t m_maxLineBytes;
  EventLineSplitter m_splitter;
  std::uint64_t m_offset = 0;
  bool m_haveIdentity = false;
  std::uint64_t m_device = 0;
  std::uint64_t m_inode = 0;
  // The first bytes of the file as read; a truncate-and-rewrite between two polls that leaves
  // the file longer still changes these, so it is caught too.
  std::string m_head;
  std::size_t m_resets = 0;
};

}  // namespace tb::core
