#pragma once
// scanMediaFolder: the video or image files of a dataset folder, in a deterministic order.

#include <string>
#include <vector>

namespace tb::trainer::media {

enum class MediaKind {
  Video,  ///< mp4 avi mkv webm mov gif m4v mpg mpeg ogv
  Image,  ///< jpg jpeg png webp bmp
};

/// Every regular file under `root` (recursively, following no symlinked folders) whose
/// extension, compared case-insensitively, belongs to `kind`. Folders and files whose name
/// starts with '.' are skipped (hidden folders, editor and macOS "._" sidecar files).
/// Paths are returned as `root / relative`, sorted by their generic (forward-slash) string,
/// so two scans of the same tree agree on every machine. Unreadable subfolders are skipped;
/// a missing `root` throws MediaError.
std::vector<std::string> scanMediaFolder(const std::string& root, MediaKind kind);

/// Whether `path`'s extension (case-insensitive) belongs to `kind`.
bool hasMediaExtension(const std::string& path, MediaKind kind);

}  // namespace tb::trainer::media
