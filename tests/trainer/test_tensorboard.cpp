// TensorBoard event files: CRC32C, TFRecord framing checked on the raw bytes, the Event
// protobuf against hand-computed bytes, round trips through the reader, and damaged files.

#include "tests/trainer/test_support.h"
#include "trainer/outputs/tensorboard_writer.h"

#include <gtest/gtest.h>
#include <boost/crc.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace tb::trainer::outputs {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;
using testing::TempFolder;

// The test's own CRC and masking, so the framing checks do not trust the code under test.
uint32_t boostCrc32c(const uint8_t* data, std::size_t size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

uint32_t masked(uint32_t crc) {
  return static_cast<uint32_t>(((crc >> 15) | (crc << 17)) + 0xa282ead8u);
}

uint64_t le(const uint8_t* p, int count) {
  uint64_t v = 0;
  for (int i = 0; i < count; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void putLe(Bytes& out, uint64_t v, int count) {
  for (int i = 0; i < count; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes readBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeBytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A TFRecord framed by the test itself.
Bytes frame(const Bytes& data) {
  Bytes record;
  putLe(record, data.size(), 8);
  putLe(record, masked(boostCrc32c(record.data(), 8)), 4);
  record.insert(record.end(), data.begin(), data.end());
  putLe(record, masked(boostCrc32c(data.data(), data.size())), 4);
  return record;
}

// Offsets of the records of a file, from its length fields alone.
std::vector<std::size_t> recordOffsets(const Bytes& bytes) {
  std::vector<std::size_t> offsets;
  for (std::size_t pos = 0; pos + 12 <= bytes.size(); pos += 16 + le(bytes.data() + pos, 8))
    offsets.push_back(pos);
  return offsets;
}

// A PNG signature followed by every byte value: the writer stores the bytes, it never decodes.
Bytes fakePng() {
  Bytes png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (int i = 0; i < 256; ++i) png.push_back(static_cast<uint8_t>(i));
  return png;
}

// Writes: file_version, one scalar, two scalars in one Event, one image (4 records).
fs::path writeSample(const fs::path& folder) {
  TensorBoardWriter writer(folder);
  writer.addScalar("loss/total", 10, 0.125, 1000.5);
  writer.addScalars(11, {{"lr", 3e-4}, {"data/skipped_files", 2}}, 1001.25);
  writer.addImage("samples/recon", int64_t{1} << 40, 3, 2, 4, fakePng(), 1002.0);
  return writer.path();
}

std::string errorOf(const fs::path& path) {
  try {
    readTensorBoardFile(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TensorBoard, Crc32cMatchesTheCastagnoliCheckValue) {
  const char* check = "123456789";
  EXPECT_EQ(detail::crc32c(reinterpret_cast<const uint8_t*>(check), 9), 0xE3069283u);
  EXPECT_EQ(detail::crc32c(nullptr, 0), 0u);
  EXPECT_EQ(detail::maskCrc(0xE3069283u), 0xC78AB0E5u);
  EXPECT_EQ(detail::maskCrc(0), 0xA282EAD8u);
}

TEST(TensorBoard, GoldenEventBytes) {
  TensorBoardRecord event;
  event.wallTime = 1.5;
  event.step = 3;
  TensorBoardValue& value = event.values.emplace_back();
  value.tag = "a";
  value.simpleValue = 2.0f;
  const Bytes expected = {
      0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,  // wall_time: fixed64, 1.5
      0x10, 0x03,                                            // step: varint 3
      0x2A, 0x0A,                                            // summary: 10 bytes
      0x0A, 0x08,                                            //   value: 8 bytes
      0x0A, 0x01, 'a',                                       //     tag "a"
      0x15, 0x00, 0x00, 0x00, 0x40,                          //     simple_value: fixed32, 2.0f
  };
  EXPECT_EQ(detail::encodeEvent(event), expected);
  EXPECT_EQ(detail::frameRecord(expected), frame(expected));
}

TEST(TensorBoard, ScalarsAndImageReadBackExactly) {
  TempFolder tmp;
  TensorBoardWriter writer(tmp.path());
  double before = TensorBoardWriter::now();
  writer.addScalar("loss/total", 10, 0.125, 1000.5);
  writer.addScalars(11, {{"lr", 3e-4}, {"data/skipped_files", 2}}, 1001.25);
  writer.addImage("samples/recon", int64_t{1} << 40, 3, 2, 4, fakePng(), 1002.0);
  writer.addScalar("loss/neg", -1, -7.5);
  double after = TensorBoardWriter::now();

  // Read while the writer is still open: every call has flushed whole records.
  std::vector<TensorBoardRecord> records = readTensorBoardFile(writer.path());
  ASSERT_EQ(records.size(), 5u);

  EXPECT_EQ(records[0].fileVersion, "brain.Event:2");
  EXPECT_EQ(records[0].step, 0);
  EXPECT_TRUE(records[0].values.empty());
  EXPECT_GT(records[0].wallTime, 1.6e9);
  EXPECT_LE(records[0].wallTime, before);
  EXPECT_EQ(records[0].offset, 0u);

  EXPECT_EQ(records[1].wallTime, 1000.5);
  EXPECT_EQ(records[1].step, 10);
  EXPECT_TRUE(records[1].fileVersion.empty());
  ASSERT_EQ(records[1].values.size(), 1u);
  EXPECT_EQ(records[1].values[0].tag, "loss/total");
  EXPECT_EQ(records[1].values[0].simpleValue, 0.125f);
  EXPECT_FALSE(records[1].values[0].image);

  EXPECT_EQ(records[2].wallTime, 1001.25);
  EXPECT_EQ(records[2].step, 11);
  ASSERT_EQ(records[2].values.size(), 2u);
  EXPECT_EQ(records[2].values[0].tag, "lr");
  EXPECT_EQ(records[2].values[0].simpleValue, static_cast<float>(3e-4));
  EXPECT_EQ(records[2].values[1].tag, "data/skipped_files");
  EXPECT_EQ(records[2].values[1].simpleValue, 2.0f);

  EXPECT_EQ(records[3].step, int64_t{1} << 40);
  ASSERT_EQ(records[3].values.size(), 1u);
  EXPECT_EQ(records[3].values[0].tag, "samples/recon");
  EXPECT_FALSE(records[3].values[0].simpleValue);
  ASSERT_TRUE(records[3].values[0].image);
  EXPECT_EQ(records[3].values[0].image->width, 3);
  EXPECT_EQ(records[3].values[0].image->height, 2);
  EXPECT_EQ(records[3].values[0].image->colorspace, 4);
  EXPECT_EQ(records[3].values[0].image->encoded, fakePng());

  EXPECT_EQ(records[4].step, -1);  // int64 varint: ten bytes of two's complement
  EXPECT_EQ(records[4].values.at(0).simpleValue, -7.5f);
  EXPECT_GE(records[4].wallTime, before);
  EXPECT_LE(records[4].wallTime, after);

  std::vector<std::size_t> offsets = recordOffsets(readBytes(writer.path()));
  ASSERT_EQ(offsets.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) EXPECT_EQ(records[i].offset, offsets[i]);
}

TEST(TensorBoard, RawBytesFollowTfRecordFraming) {
  TempFolder tmp;
  Bytes bytes = readBytes(writeSample(tmp.path()));
  ASSERT_GE(bytes.size(), 16u);

  // First record: the file_version Event, wall_time (9 bytes) then "brain.Event:2" (15 bytes).
  const std::string version = "brain.Event:2";
  EXPECT_EQ(le(bytes.data(), 8), 9u + 2 + version.size());
  EXPECT_EQ(le(bytes.data() + 8, 4), masked(boostCrc32c(bytes.data(), 8)));
  EXPECT_EQ(bytes[12], 0x09);
  EXPECT_EQ(bytes[21], 0x1A);
  EXPECT_EQ(static_cast<std::size_t>(bytes[22]), version.size());
  EXPECT_EQ(std::string(bytes.begin() + 23, bytes.begin() + 23 + version.size()), version);

  // Every record: both masked CRCs, and the records tile the file exactly.
  std::size_t pos = 0;
  int count = 0;
  while (pos < bytes.size()) {
    ASSERT_LE(pos + 12, bytes.size());
    uint64_t length = le(bytes.data() + pos, 8);
    EXPECT_EQ(le(bytes.data() + pos + 8, 4), masked(boostCrc32c(bytes.data() + pos, 8)));
    ASSERT_LE(pos + 16 + length, bytes.size());
    EXPECT_EQ(le(bytes.data() + pos + 12 + length, 4),
              masked(boostCrc32c(bytes.data() + pos + 12, length)));
    pos += 16 + length;
    ++count;
  }
  EXPECT_EQ(pos, bytes.size());
  EXPECT_EQ(count, 4);
}

TEST(TensorBoard, FlippedDataByteThrowsNamingTheFileAndOffset) {
  TempFolder tmp;
  fs::path path = writeSample(tmp.path());
  Bytes good = readBytes(path);
  std::size_t second = recordOffsets(good).at(1);

  Bytes bad = good;
  bad[second + 12 + 3] ^= 0x01;
  writeBytes(path, bad);
  EXPECT_THROW(readTensorBoardFile(path), std::runtime_error);
  std::string message = errorOf(path);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("offset " + std::to_string(second)), std::string::npos) << message;
  EXPECT_NE(message.find("CRC of the data"), std::string::npos) << message;

  bad = good;
  bad[second + 1] ^= 0x80;  // the length
  writeBytes(path, bad);
  message = errorOf(path);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("CRC of the length"), std::string::npos) << message;

  writeBytes(path, good);
  EXPECT_EQ(readTensorBoardFile(path).size(), 4u);
}

TEST(TensorBoard, TruncatedLastRecordIsDetected) {
  TempFolder tmp;
  fs::path path = writeSample(tmp.path());
  Bytes good = readBytes(path);
  std::size_t last = recordOffsets(good).back();

  // Cut in the data CRC, in the data, and in the header.
  for (std::size_t size : {good.size() - 1, last + 40, last + 5}) {
    writeBytes(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)));
    std::string message = errorOf(path);
    EXPECT_NE(message.find(path.string()), std::string::npos) << size << ": " << message;
    EXPECT_NE(message.find("offset " + std::to_string(last)), std::string::npos) << message;
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
  }
  // Cut exactly at a record boundary: a shorter, valid file.
  writeBytes(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(last)));
  EXPECT_EQ(readTensorBoardFile(path).size(), 3u);
}

TEST(TensorBoard, ReaderSkipsUnknownFields) {
  const Bytes event = {
      0x22, 0x03, 'x',  'y',  'z',                           // 4 graph_def: bytes, skipped
      0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x40,  // 1 wall_time: 2.0
      0x78, 0x96, 0x01,                                      // 15: varint 150
      0xA0, 0x06, 0x01,                                      // 100 (two-byte key): varint 1
      0x10, 0x07,                                            // 2 step: 7
      0x75, 0x01, 0x02, 0x03, 0x04,                          // 14: fixed32
      0x69, 1,    2,    3,    4,    5,    6,    7,    8,     // 13: fixed64
      0x18, 0x05,                                            // 3 file_version, wrong wire type
      0x2A, 0x0E,                                            // 5 summary: 14 bytes
      0x0A, 0x0C,                                            //   value: 12 bytes
      0x0A, 0x01, 'b',                                       //     tag "b"
      0x4A, 0x02, 0x01, 0x02,                                //     9 metadata, skipped
      0x15, 0x00, 0x00, 0x00, 0x3F,                          //     simple_value 0.5f
  };
  TempFolder tmp;
  fs::path path = tmp.file("events.out.tfevents.1.handmade");
  writeBytes(path, frame(event));
  std::vector<TensorBoardRecord> records = readTensorBoardFile(path);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].wallTime, 2.0);
  EXPECT_EQ(records[0].step, 7);
  EXPECT_TRUE(records[0].fileVersion.empty());
  ASSERT_EQ(records[0].values.size(), 1u);
  EXPECT_EQ(records[0].values[0].tag, "b");
  EXPECT_EQ(records[0].values[0].simpleValue, 0.5f);

  // Valid CRCs around a malformed Event: a field longer than its message, a group wire type.
  for (const Bytes& malformed : {Bytes{0x2A, 0x05, 0x0A}, Bytes{0x10, 0x80}, Bytes{0x0B, 0x00}}) {
    writeBytes(path, frame(malformed));
    std::string message = errorOf(path);
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("malformed Event"), std::string::npos) << message;
  }
}

TEST(TensorBoard, FileNameFollowsTheTfEventsPattern) {
  TempFolder tmp;
  fs::path folder = tmp.path() / "runs" / "tb";  // missing: created
  int64_t before = static_cast<int64_t>(TensorBoardWriter::now());
  fs::path path;
  fs::path second;
  {
    TensorBoardWriter writer(folder);
    TensorBoardWriter other(folder);  // same folder, same second: its own file
    path = writer.path();
    second = other.path();
  }
  int64_t after = static_cast<int64_t>(TensorBoardWriter::now());
  EXPECT_EQ(path.parent_path(), folder);
  EXPECT_TRUE(fs::is_regular_file(path));

  std::smatch match;
  std::string name = path.filename().string();
  ASSERT_TRUE(std::regex_match(
      name, match, std::regex(R"(events\.out\.tfevents\.(\d+)\.(.+)\.(\d+)\.tokenbench)")))
      << name;
  EXPECT_GE(std::stoll(match[1]), before);
  EXPECT_LE(std::stoll(match[1]), after);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(match[2].str(), host);
  EXPECT_EQ(std::stoll(match[3]), ::getpid());

  EXPECT_NE(second, path);
  EXPECT_NE(second.filename().string().find("events.out.tfevents."), std::string::npos);
  EXPECT_EQ(readTensorBoardFile(second).size(), 1u);
}

TEST(TensorBoard, ErrorsNameTheFileOrTheArgument) {
  TempFolder tmp;
  fs::path blocker = tmp.path() / "blocker";
  writeBytes(blocker, {1});
  try {
    TensorBoardWriter writer(blocker / "sub");
    ADD_FAILURE() << "a folder under a regular file was created";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((blocker / "sub").string()), std::string::npos)
        << e.what();
  }
  EXPECT_NE(errorOf(tmp.path() / "missing").find((tmp.path() / "missing").string()),
            std::string::npos);

  TensorBoardWriter writer(tmp.path());
  Bytes rgb(3 * 2 * 3, 0x80);  // raw pixels, not a PNG
  EXPECT_THROW(writer.addImage("img", 0, 3, 2, 3, rgb, 1.0), std::invalid_argument);
  EXPECT_THROW(writer.addImage("img", 0, 3, 2, 5, fakePng(), 1.0), std::invalid_argument);
  EXPECT_THROW(writer.addImage("img", 0, 0, 2, 3, fakePng(), 1.0), std::invalid_argument);
  EXPECT_THROW(writer.addScalar("", 0, 1.0), std::invalid_argument);
  writer.addScalars(1, {}, 1.0);  // nothing to write
  writer.flush();
  EXPECT_EQ(readTensorBoardFile(writer.path()).size(), 1u);
}

}  // namespace
}  // namespace tb::trainer::outputs
