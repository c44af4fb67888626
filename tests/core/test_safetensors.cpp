#include "core/safetensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {
namespace {

namespace fs = std::filesystem;

// A file image whose length prefix matches `header` exactly (no padding added).
std::string withHeader(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  const std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::uint64_t headerLength(std::string_view file) {
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i) {
    length |= static_cast<std::uint64_t>(static_cast<unsigned char>(file[i])) << (8 * i);
  }
  return length;
}

std::string parseError(std::string_view bytes) {
  try {
    SafetensorsView::parse(bytes);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "<accepted>";
}

template <typename T>
std::string bytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A writer with one tensor of every element size, a scalar, a zero-size tensor and metadata.
SafetensorsWriter sampleWriter() {
  SafetensorsWriter writer;
  const std::vector<float> weights = {1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f};
  writer.add("enc.conv.weight", DType::F32, {2, 3}, weights.data(), weights.size() * 4);
  const std::vector<std::uint16_t> bf16 = {0x3F80, 0xBF80, 0x7FC0, 0x0001};
  writer.add("enc.norm.bias", DType::BF16, {4}, bf16.data(), bf16.size() * 2);
  const std::vector<std::uint8_t> codes = {7, 0, 255};
  writer.add("codes", DType::U8, {3}, codes.data(), codes.size());
  const std::int64_t step = -42;
  writer.add("step", DType::I64, {}, &step, sizeof(step));
  writer.add("empty", DType::Bool, {0, 5}, nullptr, 0);
  const std::vector<double> ema = {0.999, 1.0 / 3.0};
  writer.add("ema.decay", DType::F64, {1, 2}, ema.data(), ema.size() * 8);
  writer.setMetadata("format", "pt");
  writer.setMetadata("step", "1000");
  return writer;
}

fs::path makeTempFolder() {
  std::string pattern = (fs::temp_directory_path() / "tb_safetensors_XXXXXX").string();
  const char* made = ::mkdtemp(pattern.data());
  if (made == nullptr) throw std::runtime_error("mkdtemp failed");
  return fs::path(made);
}

class TempFolder {
 public:
  TempFolder() : m_path(makeTempFolder()) {}
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
};

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> folderEntries(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// ---------------------------------------------------------------------------------------------

TEST(SafetensorsDType, NamesAndSizesRoundTrip) {
  const std::vector<std::pair<DType, std::size_t>> expected = {
      {DType::F64, 8},    {DType::F32, 4}, {DType::F16, 2}, {DType::BF16, 2}, {DType::F8E4M3, 1},
      {DType::F8E5M2, 1}, {DType::I64, 8}, {DType::I32, 4}, {DType::I16, 2},  {DType::I8, 1},
      {DType::U64, 8},    {DType::U32, 4}, {DType::U16, 2}, {DType::U8, 1},   {DType::Bool, 1}};
  for (const auto& [dtype, size] : expected) {
    EXPECT_EQ(dtypeSize(dtype), size) << dtypeName(dtype);
    EXPECT_EQ(parseDType(dtypeName(dtype)), dtype) << dtypeName(dtype);
  }
  EXPECT_EQ(dtypeName(DType::Bool), "BOOL");
  EXPECT_EQ(dtypeName(DType::F8E4M3), "F8_E4M3");
  EXPECT_EQ(parseDType("f32"), std::nullopt);  // the format is case-sensitive
  EXPECT_EQ(parseDType("F12"), std::nullopt);
  EXPECT_EQ(parseDType(""), std::nullopt);
}

TEST(SafetensorsDType, ByteSizeChecksOverflowAndSign) {
  EXPECT_EQ(tensorByteSize(DType::F32, {2, 3}), 24u);
  EXPECT_EQ(tensorByteSize(DType::F64, {}), 8u);  // scalar
  EXPECT_EQ(tensorByteSize(DType::U8, {0, 7}), 0u);
  EXPECT_EQ(tensorByteSize(DType::F32, {-1}), std::nullopt);
  EXPECT_EQ(tensorByteSize(DType::U8, {std::int64_t{1} << 62, std::int64_t{1} << 62}),
            std::nullopt);
  // 2^62 elements fit, 2^64 bytes do not.
  EXPECT_EQ(tensorByteSize(DType::F32, {std::int64_t{1} << 62}), std::nullopt);
  EXPECT_EQ(tensorByteSize(DType::U8, {std::int64_t{1} << 62}), std::uint64_t{1} << 62);
}

TEST(SafetensorsRoundTrip, BitExact) {
  const SafetensorsWriter writer = sampleWriter();
  const std::string file = writer.serialize();
  EXPECT_EQ(writer.serialize(), file);

  const SafetensorsView view = SafetensorsView::parse(file);
  ASSERT_EQ(view.tensors().size(), 6u);

  const TensorInfo* weight = view.find("enc.conv.weight");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->dtype, DType::F32);
  EXPECT_EQ(weight->shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(view.data(*weight),
            bytesOf(std::vector<float>{1.5f, -2.0f, 3.25f, 0.0f, -0.0f, 1e-30f}));

  const TensorInfo* bias = view.find("enc.norm.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->dtype, DType::BF16);
  EXPECT_EQ(view.data(*bias), bytesOf(std::vector<std::uint16_t>{0x3F80, 0xBF80, 0x7FC0, 0x0001}));

  const TensorInfo* codes = view.find("codes");
  ASSERT_NE(codes, nullptr);
  EXPECT_EQ(codes->dtype, DType::U8);
  EXPECT_EQ(view.data(*codes), std::string("\x07\x00\xff", 3));

  const TensorInfo* step = view.find("step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->dtype, DType::I64);
  EXPECT_TRUE(step->shape.empty());
  EXPECT_EQ(view.data(*step), bytesOf(std::vector<std::int64_t>{-42}));

  const TensorInfo* empty = view.find("empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->dtype, DType::Bool);
  EXPECT_EQ(empty->shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(empty->byteSize(), 0u);
  EXPECT_TRUE(view.data(*empty).empty());

  const TensorInfo* ema = view.find("ema.decay");
  ASSERT_NE(ema, nullptr);
  EXPECT_EQ(view.data(*ema), bytesOf(std::vector<double>{0.999, 1.0 / 3.0}));

  EXPECT_EQ(view.find("missing"), nullptr);
  EXPECT_EQ(view.metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}, {"step", "1000"}}));

  // Re-writing what was read gives the same file.
  SafetensorsWriter again;
  for (const TensorInfo& tensor : view.tensors()) {
    const std::string_view bytes = view.data(tensor);
    again.add(tensor.name, tensor.dtype, tensor.shape, bytes.data(), bytes.size());
  }
  for (const auto& [key, value] : view.metadata()) again.setMetadata(key, value);
  EXPECT_EQ(again.serialize(), file);
}

TEST(SafetensorsRoundTrip, BytesDoNotDependOnAddOrder) {
  const std::vector<float> a = {1, 2};
  const std::vector<std::uint8_t> b = {3};
  const std::vector<float> c = {4};
  SafetensorsWriter forward;
  forward.add("a", DType::F32, {2}, a.data(), 8);
  forward.add("b", DType::U8, {1}, b.data(), 1);
  forward.add("c", DType::F32, {1}, c.data(), 4);
  SafetensorsWriter backward;
  backward.add("c", DType::F32, {1}, c.data(), 4);
  backward.add("b", DType::U8, {1}, b.data(), 1);
  backward.add("a", DType::F32, {2}, a.data(), 8);
  EXPECT_EQ(forward.serialize(), backward.serialize());
}

TEST(SafetensorsRoundTrip, HeaderPaddedToEightAndTensorsAligned) {
  // Names of every length 1..8 make every header length residue mod 8 appear.
  for (int nameLength = 1; nameLength <= 8; ++nameLength) {
    SafetensorsWriter writer = sampleWriter();
    const std::uint8_t odd = 1;
    writer.add(std::string(static_cast<std::size_t>(nameLength), 'n'), DType::U8, {1}, &odd, 1);
    const std::string file = writer.serialize();
    const std::uint64_t n = headerLength(file);
    EXPECT_EQ((8 + n) % 8, 0u) << "name length " << nameLength;
    const std::string header = file.substr(8, n);
    // Padding is spaces only, after the closing brace.
    const std::size_t close = header.find_last_of('}');
    ASSERT_NE(close, std::string::npos);
    EXPECT_EQ(header.find_first_not_of(' ', close + 1), std::string::npos);
    EXPECT_LT(header.size() - close - 1, 8u);

    const SafetensorsView view = SafetensorsView::parse(file);
    for (const TensorInfo& tensor : view.tensors()) {
      EXPECT_EQ(tensor.begin % dtypeSize(tensor.dtype), 0u) << tensor.name;
    }
  }
}

TEST(SafetensorsRoundTrip, EscapedNamesAndMetadata) {
  SafetensorsWriter writer;
  const std::string name = "quote\" back\\slash\nnewline \xC3\xA9\xE2\x82\xAC tab\t";
  const float value = 7.0f;
  writer.add(name, DType::F32, {1}, &value, 4);
  writer.add("", DType::F32, {0}, nullptr, 0);
  writer.setMetadata("k\"ey", "va\\lue\x01");
  writer.setMetadata("", "");
  const std::string file = writer.serialize();
  const SafetensorsView view = SafetensorsView::parse(file);
  ASSERT_NE(view.find(name), nullptr);
  EXPECT_EQ(view.data(*view.find(name)), std::string("\x00\x00\xe0\x40", 4));
  EXPECT_NE(view.find(""), nullptr);
  EXPECT_EQ(view.metadata().at("k\"ey"), "va\\lue\x01");
  EXPECT_EQ(view.metadata().at(""), "");
}

TEST(SafetensorsRoundTrip, EmptyWriterGivesValidFile) {
  const std::string file = SafetensorsWriter().serialize();
  EXPECT_EQ(file, withHeader("{}      "));
  const SafetensorsView view = SafetensorsView::parse(file);
  EXPECT_TRUE(view.tensors().empty());
  EXPECT_TRUE(view.metadata().empty());
}

// Worked out by hand from the format description, not from our writer.
const std::string kGoldenOneF32 = std::string(
    "\x38\x00\x00\x00\x00\x00\x00\x00"                                  // N = 56, u64 little-endian
    "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}"  // 54 bytes of JSON
    "  "                                                                // 2 spaces: 8 + 56 = 64
    "\x00\x00\x80\x3f"                                                  // 1.0f
    "\x00\x00\x00\x40",                                                 // 2.0f
    72);

TEST(SafetensorsGolden, OneF32TensorBytes) {
  ASSERT_EQ(kGoldenOneF32.size(), 72u);
  SafetensorsWriter writer;
  const std::vector<float> values = {1.0f, 2.0f};
  writer.add("x", DType::F32, {2}, values.data(), 8);
  const std::string file = writer.serialize();
  ASSERT_EQ(file.size(), kGoldenOneF32.size());
  for (std::size_t i = 0; i < file.size(); ++i) {
    EXPECT_EQ(static_cast<unsigned>(static_cast<unsigned char>(file[i])),
              static_cast<unsigned>(static_cast<unsigned char>(kGoldenOneF32[i])))
        << "byte " << i;
  }

  const SafetensorsView view = SafetensorsView::parse(kGoldenOneF32);
  ASSERT_EQ(view.tensors().size(), 1u);
  EXPECT_EQ(view.tensors()[0].name, "x");
  EXPECT_EQ(view.tensors()[0].begin, 0u);
  EXPECT_EQ(view.tensors()[0].end, 8u);
  EXPECT_EQ(view.dataBuffer().size(), 8u);
}

TEST(SafetensorsGolden, SeedFileMatchesHandWrittenBytes) {
  const fs::path path = fs::path(TB_TEST_DATA_DIR) / "golden/safetensors/one_f32.safetensors";
  EXPECT_EQ(readAll(path), kGoldenOneF32);
  const SafetensorsFile file = SafetensorsFile::read(path);
  ASSERT_NE(file.find("x"), nullptr);
  EXPECT_EQ(file.data(*file.find("x")), kGoldenOneF32.substr(64));
}

TEST(SafetensorsGolden, EverySeedFileIsValid) {
  const fs::path folder = fs::path(TB_TEST_DATA_DIR) / "golden/safetensors";
  int seeds = 0;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".safetensors") continue;
    ++seeds;
    EXPECT_NO_THROW(SafetensorsFile::read(entry.path())) << entry.path();
    EXPECT_LT(fs::file_size(entry.path()), 4096u) << entry.path();
  }
  EXPECT_GE(seeds, 3);
}

// ---------------------------------------------------------------------------------------------

struct CorruptCase {
  const char* what;
  std::string bytes;
  const char* message;
};

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":" + offsets + "}";
}

std::vector<CorruptCase> corruptCases() {
  const std::string eight(8, '\x01');
  std::string oneLong = withHeader("{}");
  oneLong[0] = 3;  // claims one byte more than follows
  std::vector<CorruptCase> cases = {
      {"shorter than the length prefix", std::string("\x10\x00\x00", 3),
       "file is 3 bytes, shorter than the 8-byte header length"},
      {"huge header length", std::string(8, '\xff') + "{}",
       "header length 18446744073709551615 exceeds file size 10"},
      {"length one past the end", oneLong, "header length 3 exceeds file size 10"},
      {"empty header", withHeader(""), "header is not valid JSON"},
      {"not JSON", withHeader("hello"), "header is not valid JSON"},
      {"trailing garbage", withHeader("{} x"), "header is not valid JSON"},
      {"invalid UTF-8", withHeader("{\"\xff\":1}"), "header is not valid JSON"},
      {"not an object", withHeader("[1,2]"), "header is not a JSON object"},
      {"leading whitespace", withHeader(" {}"), "header does not start with '{'"},
      {"entry not an object", withHeader("{\"x\":1}"), "tensor \"x\": entry is not an object"},
      {"missing field", withHeader("{\"x\":{\"dtype\":\"F32\",\"shape\":[0]}}"),
       "tensor \"x\": missing \"data_offsets\""},
      {"unexpected field",
       withHeader("{\"x\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0],\"y\":1}}"),
       "tensor \"x\": unexpected field \"y\""},
      {"dtype not a string",
       withHeader("{\"x\":{\"dtype\":4,\"shape\":[0],\"data_offsets\":[0,0]}}"),
       "tensor \"x\": \"dtype\" is not a string"},
      {"unknown dtype", withHeader("{" + entry("x", "F12", "[0]", "[0,0]") + "}"),
       "tensor \"x\": unknown dtype \"F12\""},
      {"shape not an array", withHeader("{" + entry("x", "F32", "2", "[0,8]") + "}", eight),
       "tensor \"x\": \"shape\" is not an array"},
      {"negative dimension", withHeader("{" + entry("x", "F32", "[-1]", "[0,0]") + "}"),
       "tensor \"x\": negative dimension -1"},
      {"fractional dimension", withHeader("{" + entry("x", "U8", "[1.5]", "[0,1]") + "}", "a"),
       "is not an integer in [0, 2^63)"},
      {"dimension 2^63", withHeader("{" + entry("x", "U8", "[9223372036854775808]", "[0,0]") + "}"),
       "is not an integer in [0, 2^63)"},
      {"shape product overflow",
       withHeader("{" + entry("x", "F32", "[4611686018427387904,4611686018427387904]", "[0,0]") +
                  "}"),
       "tensor \"x\": shape [4611686018427387904, 4611686018427387904] of F32 overflows a 64-bit "
       "byte count"},
      {"offsets not a pair", withHeader("{" + entry("x", "F32", "[0]", "[0]") + "}"),
       "tensor \"x\": \"data_offsets\" is not an array of two integers"},
      {"negative offset", withHeader("{" + entry("x", "F32", "[0]", "[-4,-4]") + "}"),
       "are not non-negative integers"},
      {"end before begin", withHeader("{" + entry("x", "U8", "[4]", "[8,4]") + "}", eight),
       "tensor \"x\": data_offsets [8, 4] end before they begin"},
      {"offsets do not match shape",
       withHeader("{" + entry("enc.conv.weight", "F32", "[2,3]", "[0,12]") + "}",
                  std::string(12, '\0')),
       "tensor \"enc.conv.weight\": data_offsets [0, 12] do not match shape [2, 3] of F32 (24 "
       "bytes)"},
      {"out of bounds", withHeader("{" + entry("x", "F32", "[2]", "[0,8]") + "}", "abcd"),
       "tensor \"x\": data_offsets [0, 8] exceed the data buffer (4 bytes)"},
      {"gap between tensors",
       withHeader(
           "{" + entry("a", "F32", "[1]", "[0,4]") + "," + entry("b", "F32", "[1]", "[8,12]") + "}",
           std::string(12, '\0')),
       "offsets do not cover the data buffer exactly (gap at byte 4)"},
      {"gap at the start", withHeader("{" + entry("a", "F32", "[1]", "[4,8]") + "}", eight),
       "offsets do not cover the data buffer exactly (gap at byte 0)"},
      {"trailing bytes", withHeader("{" + entry("a", "F32", "[1]", "[0,4]") + "}", eight),
       "offsets do not cover the data buffer exactly (gap at byte 4 of 8)"},
      {"overlapping tensors",
       withHeader(
           "{" + entry("a", "F32", "[2]", "[0,8]") + "," + entry("b", "F32", "[2]", "[4,12]") + "}",
           std::string(12, '\0')),
       "overlapping tensors \"a\" and \"b\""},
      {"empty tensor inside another",
       withHeader(
           "{" + entry("a", "F32", "[2]", "[0,8]") + "," + entry("z", "F32", "[0]", "[4,4]") + "}",
           eight),
       "overlapping tensors \"a\" and \"z\""},
      {"metadata value not a string", withHeader("{\"__metadata__\":{\"step\":1}}"),
       "__metadata__ value for \"step\" is not a string"},
      {"metadata not an object", withHeader("{\"__metadata__\":[]}"),
       "__metadata__ is not an object"},
      {"duplicate tensor",
       withHeader("{" + entry("a", "U8", "[0]", "[0,0]") + "," + entry("a", "U8", "[0]", "[0,0]") +
                  "}"),
       "duplicate key \"a\" in header"},
      {"duplicate field",
       withHeader(
           "{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}}"),
       "duplicate key \"dtype\" in header"},
      {"duplicate metadata key", withHeader("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"),
       "duplicate key \"k\" in header"},
      {"65 levels of nesting",
       withHeader("{\"a\":" + std::string(64, '[') + std::string(64, ']') + "}"),
       "header JSON nests deeper than 64 levels"},
      {"100000 levels of nesting", withHeader(std::string(100000, '[')),
       "header JSON nests deeper than 64 levels"},
  };
  return cases;
}

TEST(SafetensorsCorrupt, EachInputRejectedWithItsReason) {
  const auto cases = corruptCases();
  ASSERT_GE(cases.size(), 12u);
  for (const CorruptCase& c : cases) {
    const std::string message = parseError(c.bytes);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << c.what << ": got \"" << message << "\", want it to contain \"" << c.message << "\"";
  }
}

TEST(SafetensorsCorrupt, NestingAtTheLimitIsNotANestingError) {
  // 1 (header) + 63 arrays = 64 levels: allowed by the depth guard, rejected for its shape.
  const std::string bytes =
      withHeader("{\"a\":" + std::string(63, '[') + std::string(63, ']') + "}");
  EXPECT_EQ(parseError(bytes), "tensor \"a\": entry is not an object");
}

TEST(SafetensorsCorrupt, ZeroSizeTensorsAtBoundariesAreAccepted) {
  const std::string bytes = withHeader(
      "{" + entry("z0", "F32", "[0]", "[0,0]") + "," + entry("a", "F32", "[1]", "[0,4]") + "," +
          entry("z1", "F32", "[3,0]", "[4,4]") + "," + entry("b", "U8", "[4]", "[4,8]") + "," +
          entry("z2", "I8", "[0]", "[8,8]") + "}",
      std::string(8, '\x02'));
  const SafetensorsView view = SafetensorsView::parse(bytes);
  ASSERT_EQ(view.tensors().size(), 5u);
  std::vector<std::string> order;
  for (const TensorInfo& t : view.tensors()) order.push_back(t.name);
  EXPECT_EQ(order, (std::vector<std::string>{"z0", "a", "z1", "b", "z2"}));
}

TEST(SafetensorsCorrupt, LongNamesAreCutInMessages) {
  const std::string name(100000, 'q');
  const std::string message =
      parseError(withHeader("{" + entry(name, "F12", "[0]", "[0,0]") + "}"));
  EXPECT_NE(message.find("unknown dtype \"F12\""), std::string::npos) << message.substr(0, 300);
  EXPECT_LT(message.size(), 400u);
}

TEST(SafetensorsTruncation, EveryPrefixOfAValidFileIsRejected) {
  const std::string file = sampleWriter().serialize();
  ASSERT_NO_THROW(SafetensorsView::parse(file));
  std::size_t accepted = 0;
  std::size_t firstAccepted = 0;
  for (std::size_t length = 0; length < file.size(); ++length) {
    // A copy of exactly `length` bytes, so AddressSanitizer sees any read past the end.
    const std::vector<char> prefix(file.begin(), file.begin() + static_cast<long>(length));
    try {
      SafetensorsView::parse(std::string_view(prefix.data(), prefix.size()));
      if (accepted++ == 0) firstAccepted = length;
    } catch (const SafetensorsError&) {
    }
  }
  EXPECT_EQ(accepted, 0u) << "first accepted prefix length " << firstAccepted << " of "
                          << file.size();
  // One byte too many is as wrong as one too few.
  EXPECT_NE(parseError(file + '\0').find("gap at byte"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------

std::string addError(const std::string& name, DType dtype, std::vector<std::int64_t> shape,
                     const void* data, std::size_t bytes) {
  SafetensorsWriter writer;
  const float one = 1.0f;
  writer.add("taken", DType::F32, {1}, &one, 4);
  try {
    writer.add(name, dtype, std::move(shape), data, bytes);
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(writer.tensorCount(), 1u) << "a rejected add() must not store anything";
    return e.what();
  }
  return "<accepted>";
}

TEST(SafetensorsWriter, RejectsInvalidTensors) {
  const std::vector<float> six(6, 0.0f);
  EXPECT_EQ(addError("w", DType::F32, {2, 3}, six.data(), 20),
            "tensor \"w\": 20 bytes given for shape [2, 3] of F32 (24 bytes)");
  EXPECT_EQ(addError("taken", DType::F32, {1}, six.data(), 4), "tensor \"taken\": added twice");
  EXPECT_EQ(addError("__metadata__", DType::F32, {1}, six.data(), 4),
            "tensor name \"__metadata__\" is reserved for the metadata object");
  EXPECT_EQ(addError("w", DType::F32, {2, -3}, six.data(), 24),
            "tensor \"w\": negative dimension -3 in shape [2, -3]");
  EXPECT_EQ(addError("w", DType::U8, {std::int64_t{1} << 62, 8}, six.data(), 0),
            "tensor \"w\": shape [4611686018427387904, 8] of U8 overflows a 64-bit byte count");
  EXPECT_EQ(addError("w", DType::F32, {1}, nullptr, 4), "tensor \"w\": data is null");
  EXPECT_NE(addError("bad\xff", DType::F32, {1}, six.data(), 4).find("is not valid UTF-8"),
            std::string::npos);
  EXPECT_EQ(addError("w", DType::F32, {0}, nullptr, 0), "<accepted>");
}

// The overload that takes the bytes over (clip shards of hundreds of MB) writes what the copying
// one writes, and checks the same things.
TEST(SafetensorsWriter, AddTakingTheBytesWritesTheSameFile) {
  const std::vector<char> pixels{1, 2, 3, 4, 5, 6};
  SafetensorsWriter copied, taken;
  copied.add("clips", DType::U8, {2, 3}, pixels.data(), pixels.size());
  taken.add("clips", DType::U8, {2, 3}, std::vector<char>(pixels));
  EXPECT_EQ(taken.serialize(), copied.serialize());
  try {
    taken.add("more", DType::U8, {4}, std::vector<char>(pixels));
    FAIL() << "expected SafetensorsError";
  } catch (const SafetensorsError& e) {
    EXPECT_STREQ(e.what(), "tensor \"more\": 6 bytes given for shape [4] of U8 (4 bytes)");
  }
  EXPECT_EQ(taken.tensorCount(), 1u);
}

TEST(SafetensorsWriter, RejectsInvalidMetadataAndOverwritesKeys) {
  SafetensorsWriter writer;
  EXPECT_THROW(writer.setMetadata("k", "\xc3"), SafetensorsError);
  EXPECT_THROW(writer.setMetadata("\xc3", "v"), SafetensorsError);
  writer.setMetadata("k", "1");
  writer.setMetadata("k", "2");
  const std::string file = writer.serialize();
  const SafetensorsView view = SafetensorsView::parse(file);
  EXPECT_EQ(view.metadata(), (std::map<std::string, std::string>{{"k", "2"}}));
}

TEST(SafetensorsWriter, CopiesTheCallersBytes) {
  std::vector<float> values = {1.0f, 2.0f};
  SafetensorsWriter writer;
  writer.add("x", DType::F32, {2}, values.data(), 8);
  values[0] = 99.0f;  // changing the caller's buffer afterwards must not change the file
  EXPECT_EQ(writer.serialize(), kGoldenOneF32);
}

// ---------------------------------------------------------------------------------------------

TEST(SafetensorsFile, WriteFileReplacesAtomically) {
  TempFolder folder;
  const fs::path path = folder.path() / "model.safetensors";

  SafetensorsWriter first;
  const float one = 1.0f;
  first.add("old", DType::F32, {1}, &one, 4);
  first.writeFile(path);
  EXPECT_EQ(readAll(path), first.serialize());

  const SafetensorsWriter second = sampleWriter();
  second.writeFile(path);
  EXPECT_EQ(readAll(path), second.serialize());
  // No temporary file left behind, and nothing else created.
  EXPECT_EQ(folderEntries(folder.path()), std::vector<std::string>{"model.safetensors"});

  const SafetensorsFile file = SafetensorsFile::read(path);
  EXPECT_EQ(file.find("old"), nullptr);
  EXPECT_EQ(file.tensors().size(), 6u);
  EXPECT_EQ(file.metadata().at("step"), "1000");
}

TEST(SafetensorsFile, WriteIntoMissingFolderFailsAndLeavesNothing) {
  TempFolder folder;
  const fs::path path = folder.path() / "absent" / "model.safetensors";
  try {
    sampleWriter().writeFile(path);
    FAIL() << "writeFile into a missing folder succeeded";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": cannot create temporary file", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(folderEntries(folder.path()).empty());
}

TEST(SafetensorsFile, WriteOverAFolderFailsAndRemovesTheTemporary) {
  TempFolder folder;
  const fs::path path = folder.path() / "model.safetensors";
  fs::create_directory(path);
  fs::create_directory(path / "child");  // rename() cannot replace a non-empty folder
  try {
    sampleWriter().writeFile(path);
    FAIL() << "writeFile over a folder succeeded";
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string() + ": rename failed"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(folderEntries(folder.path()), std::vector<std::string>{"model.safetensors"});
}

TEST(SafetensorsFile, ReadErrorsStartWithThePath) {
  TempFolder folder;
  const fs::path missing = folder.path() / "missing.safetensors";
  try {
    SafetensorsFile::read(missing);
    FAIL() << "reading a missing file succeeded";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(std::string(e.what()), missing.string() + ": cannot open: No such file or directory");
  }

  const fs::path corrupt = folder.path() / "model.safetensors";
  {
    std::ofstream out(corrupt, std::ios::binary);
    std::string bytes(1024, '\0');
    std::memset(bytes.data(), 0xff, 8);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    SafetensorsFile::read(corrupt);
    FAIL() << "reading a corrupt file succeeded";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(corrupt.string() +
                                              ": header length 18446744073709551615 exceeds "
                                              "file size 1024",
                                          0),
              0u)
        << e.what();
  }

  try {
    SafetensorsFile::read(folder.path());
    FAIL() << "reading a folder succeeded";
  } catch (const SafetensorsError& e) {
    EXPECT_EQ(std::string(e.what()), folder.path().string() + ": not a regular file");
  }
}

TEST(SafetensorsFile, MovedFileKeepsItsData) {
  TempFolder folder;
  const fs::path path = folder.path() / "x.safetensors";
  SafetensorsWriter writer;
  const std::vector<float> values = {1.0f, 2.0f};
  writer.add("x", DType::F32, {2}, values.data(), 8);
  writer.writeFile(path);

  SafetensorsFile file = SafetensorsFile::read(path);
  SafetensorsFile moved = std::move(file);
  ASSERT_NE(moved.find("x"), nullptr);
  EXPECT_EQ(moved.data(*moved.find("x")), bytesOf(values));
  SafetensorsFile assigned = SafetensorsFile::read(path);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.data(*assigned.find("x")), bytesOf(values));
}

TEST(SafetensorsView, DataRejectsForeignTensorInfo) {
  const SafetensorsView view = SafetensorsView::parse(kGoldenOneF32);
  TensorInfo foreign;
  foreign.name = "y";
  foreign.begin = 4;
  foreign.end = 12;
  EXPECT_THROW(view.data(foreign), SafetensorsError);
}

}  // namespace
}  // namespace tb::core
