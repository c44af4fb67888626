#pragma once
// Write-to-temporary-then-rename, shared by the video encoder and the PNG writer.

#include <filesystem>
#include <string>

namespace tb::trainer::media {

/// A temporary file next to `target` (same folder, so the final rename is atomic):
/// "<dir>/.<name>.tmp-<pid>-<n>". commit() renames it over `target`; if commit() is never
/// called, the destructor removes the temporary file. The folder must exist.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& tempPath() const { return m_temp; }
  const std::filesystem::path& target() const { return m_target; }
  /// Renames the temporary file over the target; throws MediaError (naming the target) on failure.
  void commit();

 private:
  std::filesystem::path m_target;
  std::filesystem::path m_temp;
  bool m_committed = false;
};

/// Writes `bytes` to `target` through an AtomicFile: a reader sees the old file or the whole new
/// one, never a part. Throws MediaError naming `target` (e.g. on a full disk).
void writeFileAtomically(const std::filesystem::path& target, const std::string& bytes);

}  // namespace tb::trainer::media
