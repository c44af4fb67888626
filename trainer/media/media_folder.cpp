#include "trainer/media/media_folder.h"

#include "core/media_files.h"
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

bool isHidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

}  // namespace

// The window checks a folder with the same lists (core/media_files.h).
bool hasMediaExtension(const std::string& path, MediaKind kind) {
  return core::hasMediaExtension(
      path, kind == MediaKind::Video ? core::MediaKind::Video : core::MediaKind::Image);
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
