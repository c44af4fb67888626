#include "trainer/media/media_folder.h"

#include "trainer/media/media_error.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace tb::trainer::media {

namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 10> kVideoExtensions = {
    ".mp4", ".avi", ".mkv", ".webm", ".mov", ".gif", ".m4v", ".mpg", ".mpeg", ".ogv"};
constexpr std::array<std::string_view, 5> kImageExtensions = {".jpg", ".jpeg", ".png", ".webp",
                                                              ".bmp"};

bool isHidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

}  // namespace

bool hasMediaExtension(const std::string& path, MediaKind kind) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (kind == MediaKind::Video)
    return std::find(kVideoExtensions.begin(), kVideoExtensions.end(), ext) !=
           kVideoExtensions.end();
  return std::find(kImageExtensions.begin(), kImageExtensions.end(), ext) != kImageExtensions.end();
}

std::vector<std::string> scanMediaFolder(const std::string& root, MediaKind kind) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw MediaError(root, "not a folder");
  std::vector<std::string> found;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) throw MediaError(root, "cannot list folder: " + ec.message());
  for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    if (isHidden(entry.path())) {
      if (entry.is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (entry.is_regular_file(ec) && hasMediaExtension(entry.path().string(), kind))
      found.push_back(entry.path().generic_string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace tb::trainer::media
