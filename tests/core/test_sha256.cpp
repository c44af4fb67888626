// core::Sha256 against the FIPS 180-4 examples and a file read in blocks.
#include "core/sha256.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tb::core {
namespace {

std::string sha256Of(const std::string& text) {
  Sha256 hash;
  hash.update(text);
  return hash.hexDigest();
}

TEST(Sha256, MatchesTheStandardsExamples) {
  EXPECT_EQ(sha256Of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecesHashAsTheWhole) {
  const std::string text(200, 'x');
  Sha256 pieces;
  for (std::size_t i = 0; i < text.size(); i += 7) pieces.update(text.substr(i, 7));
  EXPECT_EQ(pieces.hexDigest(), sha256Of(text));
}

TEST(Sha256, OfAFileAndOfAMissingOne) {
  const auto file = std::filesystem::path(::testing::TempDir()) / "sha256_test.bin";
  std::ofstream(file, std::ios::binary) << std::string(3 << 20, 'a') << "tail";
  EXPECT_EQ(sha256OfFile(file), sha256Of(std::string(3 << 20, 'a') + "tail"));
  try {
    sha256OfFile(file.string() + ".missing");
    FAIL() << "a missing file was hashed";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("sha256_test.bin.missing"), std::string::npos);
  }
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace tb::core
