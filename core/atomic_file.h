#pragma once
// Replacing a file so that a reader (the window, a resuming trainer) sees the old file or the
// whole new one, never a part: write a temporary beside it, then rename it over the target.
// The one helper for it in the tree (POSIX; no Qt, no torch).

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tb::core {

/// A file that could not be created, written, synced or renamed into place; what() is
/// "<path>: <reason>" (e.g. "No space left on device").
class FileWriteError : public std::runtime_error {
 public:
  FileWriteError(const std::filesystem::path& path, const std::string& reason)
      : std::runtime_error(path.string() + ": " + reason), m_path(path), m_reason(reason) {}
  const std::filesystem::path& path() const noexcept { return m_path; }
  const std::string& reason() const noexcept { return m_reason; }

 private:
  std::filesystem::path m_path;
  std::string m_reason;
};

/// How far a replacement must survive. Durable: the new file's bytes and its name survive a
/// power cut (fsync of the file and of its folder): checkpoints, state, configuration.
/// Visible: atomic for readers only, no fsync (samples and previews, cheap to make again).
enum class Durability { Durable, Visible };

/// A temporary file beside `target` ("<folder>/.<name>.tmp-<pid>-<n>": same folder, so the
/// rename is atomic; unique per process and object). The caller writes tempPath() (with any
/// writer: a stream, FFmpeg, ...) and calls commit(); without commit() the destructor removes
/// the temporary. The folder must exist.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& tempPath() const { return m_temp; }
  const std::filesystem::path& target() const { return m_target; }
  /// Renames the temporary over the target (syncing first when Durable). Throws FileWriteError
  /// naming the target; the old target is then untouched.
  void commit(Durability durability = Durability::Durable);

 private:
  std::filesystem::path m_target;
  std::filesystem::path m_temp;
  bool m_committed = false;
};

/// Replaces `target` with `bytes` through an AtomicFile. Throws FileWriteError naming `target`
/// (a full disk, an unwritable folder); `target` is then as it was.
void writeFileAtomically(const std::filesystem::path& target, std::string_view bytes,
                         Durability durability = Durability::Durable);

/// Writes `bytes` to `path` in place and fsyncs it: for files inside a temporary folder that is
/// renamed into place as a whole (a checkpoint). Throws FileWriteError naming `path`.
void writeFileSynced(const std::filesystem::path& path, std::string_view bytes);

/// fsync of a file or a folder by name (a folder makes the renames inside it durable; file
/// systems that cannot sync folders are accepted). Throws FileWriteError naming `path`.
void syncPath(const std::filesystem::path& path);

}  // namespace tb::core
