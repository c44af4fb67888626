#pragma once
// What a dataset folder's files are, by extension: the files data.type "videos" and "images"
// read (the trainer's folder scan and the window's check of a folder agree on these lists).

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tb::core {

enum class MediaKind {
  Video,  ///< mp4 avi mkv webm mov gif m4v mpg mpeg ogv
  Image,  ///< jpg jpeg png webp bmp
};

/// Extensions of each kind, lower case, with the dot.
inline constexpr std::array<std::string_view, 10> kVideoExtensions = {
    ".mp4", ".avi", ".mkv", ".webm", ".mov", ".gif", ".m4v", ".mpg", ".mpeg", ".ogv"};
inline constexpr std::array<std::string_view, 5> kImageExtensions = {".jpg", ".jpeg", ".png",
                                                                     ".webp", ".bmp"};

/// Whether `path`'s extension (compared case-insensitively) belongs to `kind`.
bool hasMediaExtension(const std::string& path, MediaKind kind);

/// Video and image files under a folder.
struct MediaFileCount {
  std::int64_t videos = 0;
  std::int64_t images = 0;
  bool complete = true;  ///< false when the count stopped at its limit of entries
};

/// Counts the video and image files under `root` (recursively, as the trainer scans a dataset
/// folder: names starting with '.' and unreadable folders are skipped), looking at no more than
/// `limit` entries. A missing or unreadable `root` counts nothing.
MediaFileCount countMediaFiles(const std::string& root, std::int64_t limit = 200000);

}  // namespace tb::core
