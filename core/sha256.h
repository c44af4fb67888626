#pragma once
// SHA-256 (FIPS 180-4), for naming files by their content: the weight files an evaluation card
// lists, and the key of cached feature statistics.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tb::core {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  /// The digest as 64 lowercase hex digits; the object is spent afterwards.
  std::string hexDigest();

 private:
  void block(const std::uint8_t* p);

  std::array<std::uint32_t, 8> m_state;
  std::array<std::uint8_t, 64> m_buffer{};
  std::size_t m_buffered = 0;
  std::uint64_t m_bytes = 0;
};

/// The SHA-256 of a file's bytes, read in 1 MiB blocks. Throws std::runtime_error naming the
/// file when it cannot be read.
std::string sha256OfFile(const std::filesystem::path& file);

}  // namespace tb::core
