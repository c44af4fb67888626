#include "core/zip_directory.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <vector>

namespace tb::core {
namespace {

std::uint64_t readLe(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;

class File {
 public:
  explicit File(const std::filesystem::path& path) : m_path(path), m_in(path, std::ios::binary) {
    if (!m_in) throw ZipError(path.string() + ": cannot open");
    m_in.seekg(0, std::ios::end);
    m_size = static_cast<std::uint64_t>(m_in.tellg());
  }
  std::uint64_t size() const { return m_size; }
  std::vector<unsigned char> read(std::uint64_t offset, std::uint64_t count, const char* what) {
    if (offset > m_size || count > m_size - offset)
      fail(std::string(what) + " runs past the end of the file (truncated?)");
    std::vector<unsigned char> bytes(count);
    m_in.seekg(static_cast<std::streamoff>(offset));
    m_in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count));
    if (!m_in) fail(std::string("cannot read ") + what);
    return bytes;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ZipError(m_path.string() + ": " + what);
  }

 private:
  std::filesystem::path m_path;
  std::ifstream m_in;
  std::uint64_t m_size = 0;
};

}  // namespace

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::map<std::string, ZipEntry> readZipDirectory(const std::filesystem::path& path) {
  File file(path);
  // The end record is 22 bytes plus a comment of up to 65535.
  const std::uint64_t tail_size = std::min<std::uint64_t>(file.size(), 22 + 65535);
  const auto tail = file.read(file.size() - tail_size, tail_size, "the end of the archive");
  std::int64_t end = -1;
  for (std::int64_t i = static_cast<std::int64_t>(tail_size) - 22; i >= 0; --i) {
    if (readLe(&tail[static_cast<std::size_t>(i)], 4) == kEndOfDirectory) {
      end = i;
      break;
    }
  }
  if (end < 0)
    file.fail("no zip end-of-central-directory record (truncated, or not a zip archive)");
  const unsigned char* e = &tail[static_cast<std::size_t>(end)];
  std::uint64_t entries = readLe(e + 10, 2), dir_size = readLe(e + 12, 4),
                dir_offset = readLe(e + 16, 4);
  const std::uint64_t end_offset = file.size() - tail_size + static_cast<std::uint64_t>(end);
  if (entries == 0xFFFF || dir_size == 0xFFFFFFFF || dir_offset == 0xFFFFFFFF) {
    if (end_offset < 20) file.fail("a Zip64 archive without its locator");
    const auto locator = file.read(end_offset - 20, 20, "the Zip64 locator");
    if (readLe(locator.data(), 4) != kZip64Locator)
      file.fail("a Zip64 archive without its locator");
    const auto z = file.read(readLe(locator.data() + 8, 8), 56, "the Zip64 end record");
    if (readLe(z.data(), 4) != kZip64End) file.fail("a damaged Zip64 end record");
    entries = readLe(z.data() + 32, 8);
    dir_size = readLe(z.data() + 40, 8);
    dir_offset = readLe(z.data() + 48, 8);
  }
  const auto dir = file.read(dir_offset, dir_size, "the central directory");
  std::map<std::string, ZipEntry> out;
  std::size_t pos = 0;
  for (std::uint64_t n = 0; n < entries; ++n) {
    if (pos + 46 > dir.size() || readLe(&dir[pos], 4) != kDirectoryEntry)
      file.fail("a damaged central directory (entry " + std::to_string(n) + ")");
    const unsigned char* d = &dir[pos];
    ZipEntry entry;
    entry.crc32 = static_cast<std::uint32_t>(readLe(d + 16, 4));
    entry.size = readLe(d + 24, 4);
    const std::size_t name_len = readLe(d + 28, 2), extra_len = readLe(d + 30, 2),
                      comment_len = readLe(d + 32, 2);
    if (pos + 46 + name_len + extra_len + comment_len > dir.size())
      file.fail("a damaged central directory (entry " + std::to_string(n) + ")");
    const std::string name(reinterpret_cast<const char*>(d + 46), name_len);
    if (entry.size == 0xFFFFFFFF) {
      // Zip64 extended information: the 8-byte uncompressed size comes first.
      for (std::size_t x = 0; x + 4 <= extra_len;) {
        const unsigned char* f = d + 46 + name_len + x;
        const std::size_t id = readLe(f, 2), len = readLe(f + 2, 2);
        if (id == 1 && len >= 8) entry.size = readLe(f + 4, 8);
        x += 4 + len;
      }
    }
    out.emplace(name, entry);
    pos += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace tb::core
