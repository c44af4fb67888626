#include "trainer/outputs/tensorboard_writer.h"

#include <boost/crc.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <system_error>

#include <unistd.h>

namespace tb::trainer::outputs {

namespace {

constexpr const char* kFileVersion = "brain.Event:2";
constexpr std::size_t kHeaderBytes = 12;  // uint64 length + uint32 masked CRC of the length
constexpr std::size_t kFooterBytes = 4;   // uint32 masked CRC of the data

// Field numbers of tensorflow/core/util/event.proto and framework/summary.proto.
constexpr uint32_t kEventWallTime = 1;
constexpr uint32_t kEventStep = 2;
constexpr uint32_t kEventFileVersion = 3;
constexpr uint32_t kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1;
constexpr uint32_t kValueSimpleValue = 2;
constexpr uint32_t kValueImage = 4;
constexpr uint32_t kImageHeight = 1;
constexpr uint32_t kImageWidth = 2;
constexpr uint32_t kImageColorspace = 3;
constexpr uint32_t kImageEncoded = 4;

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// --- encoding -----------------------------------------------------------------------------------

// Appends protobuf wire format to a byte buffer; only what Event needs.
class ProtoWriter {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      m_bytes.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    m_bytes.push_back(static_cast<uint8_t>(v));
  }
  void key(uint32_t field, WireType type) {
    varint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(type));
  }
  // int32 and int64 are both encoded as the 64-bit two's complement varint.
  void intField(uint32_t field, int64_t v) {
    key(field, WireType::kVarint);
    varint(static_cast<uint64_t>(v));
  }
  void doubleField(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, WireType::kFixed64);
    littleEndian(bits, 8);
  }
  void floatField(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    key(field, WireType::kFixed32);
    littleEndian(bits, 4);
  }
  void bytesField(uint32_t field, const uint8_t* data, std::size_t size) {
    key(field, WireType::kLengthDelimited);
    varint(size);
    m_bytes.insert(m_bytes.end(), data, data + size);
  }
  void bytesField(uint32_t field, const std::string& s) {
    bytesField(field, reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  void messageField(uint32_t field, const ProtoWriter& message) {
    bytesField(field, message.m_bytes.data(), message.m_bytes.size());
  }

  std::vector<uint8_t>& bytes() { return m_bytes; }

 private:
  void littleEndian(uint64_t v, int count) {
    for (int i = 0; i < count; ++i) m_bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }

  std::vector<uint8_t> m_bytes;
};

ProtoWriter encodeImage(const TensorBoardImage& image) {
  ProtoWriter out;
  if (image.height != 0) out.intField(kImageHeight, image.height);
  if (image.width != 0) out.intField(kImageWidth, image.width);
  if (image.colorspace != 0) out.intField(kImageColorspace, image.colorspace);
  if (!image.encoded.empty())
    out.bytesField(kImageEncoded, image.encoded.data(), image.encoded.size());
  return out;
}

ProtoWriter encodeValue(const TensorBoardValue& value) {
  ProtoWriter out;
  if (!value.tag.empty()) out.bytesField(kValueTag, value.tag);
  if (value.simpleValue) out.floatField(kValueSimpleValue, *value.simpleValue);
  if (value.image) out.messageField(kValueImage, encodeImage(*value.image));
  return out;
}

void putLittleEndian(std::vector<uint8_t>& out, uint64_t v, int count) {
  for (int i = 0; i < count; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

uint64_t getLittleEndian(const uint8_t* p, int count) {
  uint64_t v = 0;
  for (int i = 0; i < count; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// --- decoding -----------------------------------------------------------------------------------

// A malformed protobuf; readTensorBoardFile adds the file and the record offset.
class MalformedEvent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads protobuf wire format from a byte range, bounds-checked.
class ProtoReader {
 public:
  ProtoReader(const uint8_t* begin, const uint8_t* end) : m_pos(begin), m_end(end) {}

  bool atEnd() const { return m_pos == m_end; }

  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (m_pos == m_end) throw MalformedEvent("varint runs past the end of its message");
      uint8_t byte = *m_pos++;
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw MalformedEvent("varint longer than 10 bytes");
  }
  // Returns the field number; the wire type goes to `type`.
  uint32_t key(uint32_t& type) {
    uint64_t k = varint();
    type = static_cast<uint32_t>(k & 7);
    uint64_t field = k >> 3;
    if (field == 0 || field > 0x1fffffff) throw MalformedEvent("invalid field number");
    return static_cast<uint32_t>(field);
  }
  uint64_t fixed(std::size_t count) {
    need(count);
    uint64_t v = getLittleEndian(m_pos, static_cast<int>(count));
    m_pos += count;
    return v;
  }
  ProtoReader lengthDelimited() {
    uint64_t size = varint();
    need(size);
    ProtoReader inner(m_pos, m_pos + size);
    m_pos += size;
    return inner;
  }
  std::string string() {
    ProtoReader inner = lengthDelimited();
    return std::string(inner.m_pos, inner.m_end);
  }
  std::vector<uint8_t> bytes() {
    ProtoReader inner = lengthDelimited();
    return std::vector<uint8_t>(inner.m_pos, inner.m_end);
  }
  void skip(uint32_t type) {
    switch (static_cast<WireType>(type)) {
      case WireType::kVarint:
        varint();
        return;
      case WireType::kFixed64:
        fixed(8);
        return;
      case WireType::kLengthDelimited:
        lengthDelimited();
        return;
      case WireType::kFixed32:
        fixed(4);
        return;
    }
    // 3 and 4 are the deprecated groups, 6 and 7 do not exist: no Event field uses them.
    throw MalformedEvent("unsupported wire type " + std::to_string(type));
  }

 private:
  void need(uint64_t count) const {
    if (count > static_cast<uint64_t>(m_end - m_pos))
      throw MalformedEvent("field runs past the end of its message");
  }

  const uint8_t* m_pos;
  const uint8_t* m_end;
};

constexpr uint32_t wire(WireType type) { return static_cast<uint32_t>(type); }

double bitsToDouble(uint64_t bits) {
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

float bitsToFloat(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// A field whose wire type does not match the schema is an unknown field, as in protobuf itself.
TensorBoardImage decodeImage(ProtoReader in) {
  TensorBoardImage image;
  while (!in.atEnd()) {
    uint32_t type;
    uint32_t field = in.key(type);
    if (field == kImageHeight && type == wire(WireType::kVarint))
      image.height = static_cast<int32_t>(in.varint());
    else if (field == kImageWidth && type == wire(WireType::kVarint))
      image.width = static_cast<int32_t>(in.varint());
    else if (field == kImageColorspace && type == wire(WireType::kVarint))
      image.colorspace = static_cast<int32_t>(in.varint());
    else if (field == kImageEncoded && type == wire(WireType::kLengthDelimited))
      image.encoded = in.bytes();
    else
      in.skip(type);
  }
  return image;
}

TensorBoardValue decodeValue(ProtoReader in) {
  TensorBoardValue value;
  while (!in.atEnd()) {
    uint32_t type;
    uint32_t field = in.key(type);
    if (field == kValueTag && type == wire(WireType::kLengthDelimited)) {
      value.tag = in.string();
    } else if (field == kValueSimpleValue && type == wire(WireType::kFixed32)) {
      value.simpleValue = bitsToFloat(static_cast<uint32_t>(in.fixed(4)));
      value.image.reset();  // members of one oneof: the last one wins
    } else if (field == kValueImage && type == wire(WireType::kLengthDelimited)) {
      value.image = decodeImage(in.lengthDelimited());
      value.simpleValue.reset();
    } else {
      in.skip(type);
    }
  }
  return value;
}

void decodeSummary(ProtoReader in, std::vector<TensorBoardValue>& values) {
  while (!in.atEnd()) {
    uint32_t type;
    uint32_t field = in.key(type);
    if (field == kSummaryValue && type == wire(WireType::kLengthDelimited))
      values.push_back(decodeValue(in.lengthDelimited()));
    else
      in.skip(type);
  }
}

TensorBoardRecord decodeEvent(ProtoReader in) {
  TensorBoardRecord event;
  while (!in.atEnd()) {
    uint32_t type;
    uint32_t field = in.key(type);
    if (field == kEventWallTime && type == wire(WireType::kFixed64))
      event.wallTime = bitsToDouble(in.fixed(8));
    else if (field == kEventStep && type == wire(WireType::kVarint))
      event.step = static_cast<int64_t>(in.varint());
    else if (field == kEventFileVersion && type == wire(WireType::kLengthDelimited))
      event.fileVersion = in.string();
    else if (field == kEventSummary && type == wire(WireType::kLengthDelimited))
      decodeSummary(in.lengthDelimited(), event.values);  // repeated embedded messages merge
    else
      in.skip(type);
  }
  return event;
}

// --- the file -----------------------------------------------------------------------------------

std::string hostName() {
  char buffer[256] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "localhost";
  return buffer;
}

// Opens a file that did not exist before (O_EXCL), so two writers never share one.
std::FILE* createEventFile(const std::filesystem::path& folder, std::filesystem::path& path) {
  std::string stem = "events.out.tfevents." +
                     std::to_string(static_cast<int64_t>(TensorBoardWriter::now())) + "." +
                     hostName() + "." + std::to_string(::getpid());
  for (int n = 0;; ++n) {
    path = folder / (stem + (n == 0 ? "" : "." + std::to_string(n)) + ".tokenbench");
    // "x": fail if it exists; "e": close on exec, so child processes do not inherit it.
    if (std::FILE* file = std::fopen(path.c_str(), "wbxe")) return file;
    int error = errno;
    if (error != EEXIST || n == 1000)
      throw std::runtime_error("TensorBoard event file " + path.string() +
                               ": cannot create: " + std::strerror(error));
  }
}

bool hasImageSignature(const std::vector<uint8_t>& bytes) {
  static const uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  auto startsWith = [&](const uint8_t* prefix, std::size_t size) {
    return bytes.size() >= size && std::memcmp(bytes.data(), prefix, size) == 0;
  };
  static const uint8_t kGif87[] = {'G', 'I', 'F', '8', '7', 'a'};
  static const uint8_t kGif89[] = {'G', 'I', 'F', '8', '9', 'a'};
  return startsWith(kPng, sizeof kPng) || startsWith(kGif87, sizeof kGif87) ||
         startsWith(kGif89, sizeof kGif89);
}

void checkTag(const std::string& tag) {
  if (tag.empty()) throw std::invalid_argument("TensorBoardWriter: tag must not be empty");
}

}  // namespace

namespace detail {

uint32_t crc32c(const uint8_t* data, std::size_t size) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

uint32_t maskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

std::vector<uint8_t> encodeEvent(const TensorBoardRecord& event) {
  ProtoWriter out;
  if (event.wallTime != 0.0) out.doubleField(kEventWallTime, event.wallTime);
  if (event.step != 0) out.intField(kEventStep, event.step);
  if (!event.fileVersion.empty()) out.bytesField(kEventFileVersion, event.fileVersion);
  if (!event.values.empty()) {
    ProtoWriter summary;
    for (const TensorBoardValue& value : event.values)
      summary.messageField(kSummaryValue, encodeValue(value));
    out.messageField(kEventSummary, summary);
  }
  return std::move(out.bytes());
}

std::vector<uint8_t> frameRecord(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> record;
  record.reserve(kHeaderBytes + data.size() + kFooterBytes);
  putLittleEndian(record, data.size(), 8);
  putLittleEndian(record, maskCrc(crc32c(record.data(), 8)), 4);
  record.insert(record.end(), data.begin(), data.end());
  putLittleEndian(record, maskCrc(crc32c(data.data(), data.size())), 4);
  return record;
}

}  // namespace detail

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    throw std::runtime_error("TensorBoard event folder " + folder.string() +
                             ": cannot create: " + ec.message());
  m_file = createEventFile(folder, m_path);
  TensorBoardRecord first;
  first.wallTime = now();
  first.fileVersion = kFileVersion;
  try {
    writeEvent(first);
  } catch (...) {
    std::fclose(m_file);
    throw;
  }
}

TensorBoardWriter::~TensorBoardWriter() {
  // Every record was flushed when written; a close error here has nothing left to lose.
  std::fclose(m_file);
}

double TensorBoardWriter::now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

void TensorBoardWriter::addScalar(const std::string& tag, int64_t step, double value,
                                  double wallTime) {
  addScalars(step, {{tag, value}}, wallTime);
}

void TensorBoardWriter::addScalars(int64_t step,
                                   const std::vector<std::pair<std::string, double>>& values,
                                   double wallTime) {
  if (values.empty()) return;
  TensorBoardRecord event;
  event.wallTime = wallTime;
  event.step = step;
  for (const auto& [tag, value] : values) {
    checkTag(tag);
    TensorBoardValue& v = event.values.emplace_back();
    v.tag = tag;
    v.simpleValue = static_cast<float>(value);
  }
  writeEvent(event);
}

void TensorBoardWriter::addImage(const std::string& tag, int64_t step, int width, int height,
                                 int channels, const std::vector<uint8_t>& encoded,
                                 double wallTime) {
  checkTag(tag);
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("TensorBoardWriter::addImage: width and height must be positive");
  if (channels < 1 || channels > 4)
    throw std::invalid_argument("TensorBoardWriter::addImage: channels must be in [1, 4], got " +
                                std::to_string(channels));
  if (!hasImageSignature(encoded))
    throw std::invalid_argument(
        "TensorBoardWriter::addImage: encoded must be a PNG or GIF file (signature not found)");
  TensorBoardRecord event;
  event.wallTime = wallTime;
  event.step = step;
  TensorBoardValue& v = event.values.emplace_back();
  v.tag = tag;
  v.image = TensorBoardImage{width, height, channels, encoded};
  writeEvent(event);
}

void TensorBoardWriter::flush() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (std::fflush(m_file) != 0) {
    int error = errno;
    throw std::runtime_error("TensorBoard event file " + m_path.string() +
                             ": cannot flush: " + std::strerror(error));
  }
}

void TensorBoardWriter::writeEvent(const TensorBoardRecord& event) {
  std::vector<uint8_t> record = detail::frameRecord(detail::encodeEvent(event));
  std::lock_guard<std::mutex> lock(m_mutex);
  if (std::fwrite(record.data(), 1, record.size(), m_file) != record.size() ||
      std::fflush(m_file) != 0) {
    int error = errno;
    throw std::runtime_error("TensorBoard event file " + m_path.string() +
                             ": cannot write: " + std::strerror(error));
  }
}

std::vector<TensorBoardRecord> readTensorBoardFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("TensorBoard event file " + path.string() + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad())
    throw std::runtime_error("TensorBoard event file " + path.string() + ": cannot read");

  std::vector<TensorBoardRecord> records;
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    auto fail = [&](const std::string& why) {
      return std::runtime_error("TensorBoard event file " + path.string() + ": record at offset " +
                                std::to_string(pos) + ": " + why);
    };
    std::size_t left = bytes.size() - pos;
    if (left < kHeaderBytes)
      throw fail("truncated: " + std::to_string(left) + " bytes, the header alone needs " +
                 std::to_string(kHeaderBytes));
    const uint8_t* header = bytes.data() + pos;
    uint64_t length = getLittleEndian(header, 8);
    if (detail::maskCrc(detail::crc32c(header, 8)) != getLittleEndian(header + 8, 4))
      throw fail("CRC of the length does not match");
    if (length > left - kHeaderBytes || kFooterBytes > left - kHeaderBytes - length)
      throw fail("truncated: the record needs " +
                 std::to_string(kHeaderBytes + length + kFooterBytes) + " bytes, " +
                 std::to_string(left) + " are left");
    const uint8_t* data = header + kHeaderBytes;
    if (detail::maskCrc(detail::crc32c(data, length)) != getLittleEndian(data + length, 4))
      throw fail("CRC of the data does not match");
    try {
      TensorBoardRecord& record =
          records.emplace_back(decodeEvent(ProtoReader(data, data + length)));
      record.offset = pos;
    } catch (const MalformedEvent& e) {
      throw fail(std::string("malformed Event: ") + e.what());
    }
    pos += kHeaderBytes + length + kFooterBytes;
  }
  return records;
}

}  // namespace tb::trainer::outputs
