#include "core/media_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

namespace tb::core {

namespace fs = std::filesystem;

bool hasMediaExtension(const std::string& path, MediaKind kind) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto has = [&ext](const auto& list) {
    return std::find(list.begin(), list.end(), ext) != list.end();
  };
  return kind == MediaKind::Video ? has(kVideoExtensions) : has(kImageExtensions);
}

MediaFileCount countMediaFiles(const std::string& root, std::int64_t limit) {
  MediaFileCount count;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return count;
  std::int64_t seen = 0;
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    if (++seen > limit) {
      count.complete = false;
      break;
    }
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (entry.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!entry.is_regular_file(ec)) continue;
    const std::string path = entry.path().string();
    if (hasMediaExtension(path, MediaKind::Video)) {
      ++count.videos;
    } else if (hasMediaExtension(path, MediaKind::Image)) {
      ++count.images;
    }
  }
  return count;
}

}  // namespace tb::core
