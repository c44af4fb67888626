#pragma once
// The central directory of a zip archive (what torch.save writes since PyTorch 1.6), read to check
// each record's CRC-32: LibTorch's reader skips that check, so bytes flipped inside a tensor's
// data would load silently.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

namespace tb::core {

/// A file whose zip structure cannot be read. The message names the file and what is wrong.
class ZipError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ZipEntry {
  std::uint32_t crc32 = 0;
  std::uint64_t size = 0;  ///< uncompressed bytes
};

/// Every entry of the archive at `path` by its full name ("archive/data/0"), Zip64 included.
/// Throws ZipError for a file without an end-of-central-directory record (truncated, or not a
/// zip) or a directory that runs past the end of the file.
std::map<std::string, ZipEntry> readZipDirectory(const std::filesystem::path& path);

/// CRC-32 (ISO-HDLC, as zip and zlib compute it) of `size` bytes, continuing from `crc`.
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

}  // namespace tb::core
