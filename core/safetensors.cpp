// Over 600 lines on purpose: one format, its header parser, reader and atomic writer together.
#include "core/safetensors.h"

#include "core/atomic_file.h"
#include "core/posix_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <tuple>
#include <unordered_set>
#include <utility>

// POSIX: files are read through mmap and written through descriptors (fsync, O_EXCL), which
// std::filesystem and iostreams cannot do. Tokenbench builds for Linux only.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

// Tensor bytes are passed through unchanged and the format is little-endian.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.cpp assumes a little-endian host"
#endif

namespace tb::core {
namespace {

using Json = nlohmann::json;

struct DTypeSpec {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

// Indexed by the enum's value.
constexpr std::array<DTypeSpec, 15> kDTypes = {{
    {DType::F64, "F64", 8},
    {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::F8E4M3, "F8_E4M3", 1},
    {DType::F8E5M2, "F8_E5M2", 1},
    {DType::I64, "I64", 8},
    {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},
    {DType::I8, "I8", 1},
    {DType::U64, "U64", 8},
    {DType::U32, "U32", 4},
    {DType::U16, "U16", 2},
    {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
}};

constexpr bool tableFollowsEnum() {
  for (std::size_t i = 0; i < kDTypes.size(); ++i) {
    if (static_cast<std::size_t>(kDTypes[i].dtype) != i) return false;
  }
  return true;
}
static_assert(tableFollowsEnum(), "kDTypes must list DType values in declaration order");

const DTypeSpec& spec(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  if (index >= kDTypes.size()) {
    throw SafetensorsError("invalid DType value " + std::to_string(index));
  }
  return kDTypes[index];
}

// Names and values in messages come from untrusted files: quote and escape them like JSON, and
// cut them short so that a 100 MB key cannot become a 100 MB message.
std::string jsonQuoted(std::string_view text) {
  constexpr std::size_t kMaxShown = 120;
  const bool cut = text.size() > kMaxShown;
  std::string shown(text.substr(0, kMaxShown));
  std::string out = Json(shown).dump(-1, ' ', false, Json::error_handler_t::replace);
  if (cut) out += "...";
  return out;
}

template <typename Int>
std::string formatList(const std::vector<Int>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string offsetsText(std::uint64_t begin, std::uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
}

bool isValidUtf8(const std::string& text) {
  try {
    (void)Json(text).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

// nlohmann's messages quote the token read so far, which can be the whole header.
std::string shortMessage(const char* what) {
  constexpr std::size_t kMaxLength = 300;
  std::string message(what);
  if (message.size() > kMaxLength) message = message.substr(0, kMaxLength) + "...";
  return message;
}

std::string systemError() { return std::strerror(errno); }

// Reads an unsigned integer that fits `limit`; nullopt for negatives, fractions, too large.
std::optional<std::uint64_t> nonNegativeInteger(const Json& value, std::uint64_t limit) {
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v <= limit) return v;
    return std::nullopt;
  }
  if (value.is_number_integer()) {
    // "-0" parses as a signed zero.
    const auto v = value.get<std::int64_t>();
    if (v == 0) return 0;
  }
  return std::nullopt;
}

std::string errorPrefix(const std::string& name) { return "tensor " + jsonQuoted(name) + ": "; }

TensorInfo parseEntry(const std::string& name, const Json& entry, std::uint64_t bufferSize) {
  const std::string at = errorPrefix(name);
  if (!entry.is_object()) throw SafetensorsError(at + "entry is not an object");
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets") {
      throw SafetensorsError(at + "unexpected field " + jsonQuoted(it.key()));
    }
  }
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) throw SafetensorsError(at + "missing \"" + field + "\"");
  }

  TensorInfo info;
  info.name = name;

  const Json& dtype = entry.at("dtype");
  if (!dtype.is_string()) throw SafetensorsError(at + "\"dtype\" is not a string");
  const auto& dtypeText = dtype.get_ref<const std::string&>();
  const auto parsed = parseDType(dtypeText);
  if (!parsed) throw SafetensorsError(at + "unknown dtype " + jsonQuoted(dtypeText));
  info.dtype = *parsed;

  const Json& shape = entry.at("shape");
  if (!shape.is_array()) throw SafetensorsError(at + "\"shape\" is not an array");
  for (const Json& dim : shape) {
    if (dim.is_number_integer() && !dim.is_number_unsigned() && dim.get<std::int64_t>() < 0) {
      throw SafetensorsError(at + "negative dimension " + std::to_string(dim.get<std::int64_t>()) +
                             " in \"shape\"");
    }
    const auto value = nonNegativeInteger(
        dim, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (!value) {
      throw SafetensorsError(at + "\"shape\" entry " + shortMessage(dim.dump().c_str()) +
                             " is not an integer in [0, 2^63)");
    }
    info.shape.push_back(static_cast<std::int64_t>(*value));
  }

  const Json& offsets = entry.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2) {
    throw SafetensorsError(at + "\"data_offsets\" is not an array of two integers");
  }
  const auto begin = nonNegativeInteger(offsets[0], std::numeric_limits<std::uint64_t>::max());
  const auto end = nonNegativeInteger(offsets[1], std::numeric_limits<std::uint64_t>::max());
  if (!begin || !end) {
    throw SafetensorsError(at + "\"data_offsets\" " + shortMessage(offsets.dump().c_str()) +
                           " are not non-negative integers");
  }
  info.begin = *begin;
  info.end = *end;
  const std::string offsetText = offsetsText(info.begin, info.end);
  if (info.end < info.begin) {
    throw SafetensorsError(at + "data_offsets " + offsetText + " end before they begin");
  }

  const auto expected = tensorByteSize(info.dtype, info.shape);
  const std::string shapeText =
      formatList(info.shape) + " of " + std::string(dtypeName(info.dtype));
  if (!expected) {
    throw SafetensorsError(at + "shape " + shapeText + " overflows a 64-bit byte count");
  }
  if (info.end - info.begin != *expected) {
    throw SafetensorsError(at + "data_offsets " + offsetText + " do not match shape " + shapeText +
                           " (" + std::to_string(*expected) + " bytes)");
  }
  if (info.end > bufferSize) {
    throw SafetensorsError(at + "data_offsets " + offsetText + " exceed the data buffer (" +
                           std::to_string(bufferSize) + " bytes)");
  }
  return info;
}

// Parses the header text, rejecting duplicate keys at any level (nlohmann would keep the last
// silently, and Python would read a different file than we do) and nesting deeper than
// kMaxJsonDepth (a header needs 3 levels; deeper ones only cost memory and time).
Json parseHeaderJson(std::string_view header) {
  // Objects at one depth follow each other, so one key set per depth, cleared whenever an
  // object starts there, tracks exactly the keys of the object being read at that depth.
  std::vector<std::unordered_set<std::string>> keysByDepth;
  const auto callback = [&keysByDepth](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        // `depth` counts the containers around this one.
        if (depth >= SafetensorsView::kMaxJsonDepth) {
          throw SafetensorsError("header JSON nests deeper than " +
                                 std::to_string(SafetensorsView::kMaxJsonDepth) + " levels");
        }
        if (event == Json::parse_event_t::object_start) {
          const auto level = static_cast<std::size_t>(depth);
          if (keysByDepth.size() <= level) keysByDepth.resize(level + 1);
          keysByDepth[level].clear();
        }
        break;
      case Json::parse_event_t::key: {
        // For a key, `depth` counts the object that holds it too.
        auto& keys = keysByDepth.at(static_cast<std::size_t>(depth) - 1);
        const auto& key = parsed.get_ref<const std::string&>();
        if (!keys.insert(key).second) {
          throw SafetensorsError("duplicate key " + jsonQuoted(key) + " in header");
        }
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    return Json::parse(header.begin(), header.end(), callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const Json::exception& e) {
    throw SafetensorsError("header is not valid JSON: " + shortMessage(e.what()));
  }
}

// Owns a file descriptor; closing on destruction only for error paths, where the first error
// is the one worth reporting.
}  // namespace

std::size_t dtypeSize(DType dtype) { return spec(dtype).size; }

std::string_view dtypeName(DType dtype) { return spec(dtype).name; }

std::optional<DType> parseDType(std::string_view name) {
  for (const auto& entry : kDTypes) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> tensorByteSize(DType dtype, const std::vector<std::int64_t>& shape) {
  // Elements first, then bytes, in the reference's order, so both reject the same shapes.
  std::uint64_t elements = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) return std::nullopt;
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dim), &elements)) {
      return std::nullopt;
    }
  }
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(dtypeSize(dtype)), &bytes)) {
    return std::nullopt;
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Reading

SafetensorsView SafetensorsView::parse(std::string_view bytes) {
  constexpr std::uint64_t kPrefix = 8;
  if (bytes.size() < kPrefix) {
    throw SafetensorsError("file is " + std::to_string(bytes.size()) +
                           " bytes, shorter than the 8-byte header length");
  }
  std::uint64_t headerLength = 0;
  for (std::size_t i = 0; i < kPrefix; ++i) {
    headerLength |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  const std::uint64_t afterPrefix = bytes.size() - kPrefix;
  if (headerLength > afterPrefix) {
    throw SafetensorsError("header length " + std::to_string(headerLength) + " exceeds file size " +
                           std::to_string(bytes.size()) + " (at most " +
                           std::to_string(afterPrefix) + " bytes follow the length)");
  }
  if (headerLength > kMaxHeaderBytes) {
    throw SafetensorsError("header length " + std::to_string(headerLength) +
                           " exceeds the limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  const std::string_view header = bytes.substr(kPrefix, headerLength);

  SafetensorsView view;
  view.m_data = bytes.substr(kPrefix + headerLength);
  const std::uint64_t bufferSize = view.m_data.size();

  const Json root = parseHeaderJson(header);
  if (!root.is_object()) throw SafetensorsError("header is not a JSON object");
  // Python's reader refuses leading whitespace (and a byte-order mark, which nlohmann skips).
  if (header.front() != '{') throw SafetensorsError("header does not start with '{'");

  try {
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it.key() == "__metadata__") {
        const Json& metadata = it.value();
        if (!metadata.is_object()) throw SafetensorsError("__metadata__ is not an object");
        for (auto m = metadata.begin(); m != metadata.end(); ++m) {
          if (!m.value().is_string()) {
            throw SafetensorsError("__metadata__ value for " + jsonQuoted(m.key()) +
                                   " is not a string");
          }
          view.m_metadata.emplace(m.key(), m.value().get<std::string>());
        }
        continue;
      }
      view.m_tensors.push_back(parseEntry(it.key(), it.value(), bufferSize));
    }
  } catch (const Json::exception& e) {
    // Every access above is type-checked first; this is a guard, not a path tests expect.
    throw SafetensorsError("header: " + shortMessage(e.what()));
  }

  // Python's reader requires the tensors, in offset order, to tile the buffer exactly; so do
  // we, so that no byte of the file is unaccounted for and no two tensors alias.
  std::sort(view.m_tensors.begin(), view.m_tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
            });
  std::uint64_t cursor = 0;
  const TensorInfo* covering = nullptr;  // the last non-empty tensor, which ends at cursor
  for (const TensorInfo& tensor : view.m_tensors) {
    if (tensor.begin < cursor) {
      throw SafetensorsError("overlapping tensors " + jsonQuoted(covering->name) + " and " +
                             jsonQuoted(tensor.name));
    }
    if (tensor.begin > cursor) {
      throw SafetensorsError("offsets do not cover the data buffer exactly (gap at byte " +
                             std::to_string(cursor) + ")");
    }
    if (tensor.end > tensor.begin) {
      cursor = tensor.end;
      covering = &tensor;
    }
  }
  if (cursor != bufferSize) {
    throw SafetensorsError("offsets do not cover the data buffer exactly (gap at byte " +
                           std::to_string(cursor) + " of " + std::to_string(bufferSize) + ")");
  }

  for (std::size_t i = 0; i < view.m_tensors.size(); ++i) {
    view.m_index.emplace(view.m_tensors[i].name, i);
  }
  return view;
}

const TensorInfo* SafetensorsView::find(std::string_view name) const {
  const auto it = m_index.find(name);
  return it == m_index.end() ? nullptr : &m_tensors[it->second];
}

std::string_view SafetensorsView::data(const TensorInfo& tensor) const {
  if (tensor.end < tensor.begin || tensor.end > m_data.size()) {
    throw SafetensorsError(errorPrefix(tensor.name) + "data_offsets " +
                           offsetsText(tensor.begin, tensor.end) +
                           " lie outside this file's data buffer");
  }
  return m_data.substr(tensor.begin, tensor.end - tensor.begin);
}

SafetensorsFile SafetensorsFile::read(const std::filesystem::path& path) {
  const std::string at = path.string() + ": ";
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw SafetensorsError(at + "cannot open: " + systemError());
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) throw SafetensorsError(at + "cannot stat: " + systemError());
  if (!S_ISREG(info.st_mode)) throw SafetensorsError(at + "not a regular file");

  SafetensorsFile file;
  file.m_bytes.resize(static_cast<std::size_t>(info.st_size));
  std::size_t done = 0;
  while (done < file.m_bytes.size()) {
    const ssize_t got = ::read(fd.get(), file.m_bytes.data() + done, file.m_bytes.size() - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw SafetensorsError(at + "read failed: " + systemError());
    }
    if (got == 0) throw SafetensorsError(at + "file shrank while being read");
    done += static_cast<std::size_t>(got);
  }

  try {
    file.m_view =
        SafetensorsView::parse(std::string_view(file.m_bytes.data(), file.m_bytes.size()));
  } catch (const SafetensorsError& e) {
    throw SafetensorsError(at + e.what());
  }
  return file;
}

// ---------------------------------------------------------------------------------------------
// Writing

void SafetensorsWriter::checkNewTensor(const std::string& name, DType dtype,
                                       const std::vector<std::int64_t>& shape,
                                       std::size_t bytes) const {
  (void)spec(dtype);  // rejects out-of-range enum values before anything is stored
  if (name == "__metadata__") {
    throw SafetensorsError("tensor name \"__metadata__\" is reserved for the metadata object");
  }
  if (!isValidUtf8(name))
    throw SafetensorsError("tensor name " + jsonQuoted(name) + " is not valid UTF-8");
  const std::string at = errorPrefix(name);
  if (m_names.count(name) != 0) throw SafetensorsError(at + "added twice");
  for (const std::int64_t dim : shape) {
    if (dim < 0) {
      throw SafetensorsError(at + "negative dimension " + std::to_string(dim) + " in shape " +
                             formatList(shape));
    }
  }
  const std::string shapeText = formatList(shape) + " of " + std::string(dtypeName(dtype));
  const auto expected = tensorByteSize(dtype, shape);
  if (!expected)
    throw SafetensorsError(at + "shape " + shapeText + " overflows a 64-bit byte count");
  if (bytes != *expected) {
    throw SafetensorsError(at + std::to_string(bytes) + " bytes given for shape " + shapeText +
                           " (" + std::to_string(*expected) + " bytes)");
  }
}

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                            const void* data, std::size_t bytes) {
  checkNewTensor(name, dtype, shape, bytes);
  if (data == nullptr && bytes > 0) throw SafetensorsError(errorPrefix(name) + "data is null");
  const auto* first = static_cast<const char*>(data);
  add(std::move(name), dtype, std::move(shape), std::vector<char>(first, first + bytes));
}

void SafetensorsWriter::add(std::string name, DType dtype, std::vector<std::int64_t> shape,
                            std::vector<char>&& bytes) {
  checkNewTensor(name, dtype, shape, bytes.size());
  Entry entry{std::move(name), dtype, std::move(shape), std::move(bytes)};
  m_names.insert(entry.name);
  m_tensors.push_back(std::move(entry));
}

void SafetensorsWriter::declare(std::string name, DType dtype, std::vector<std::int64_t> shape) {
  (void)spec(dtype);
  const auto bytes = tensorByteSize(dtype, shape);
  checkNewTensor(name, dtype, shape, bytes ? static_cast<std::size_t>(*bytes) : 0);
  Entry entry{std::move(name), dtype, std::move(shape), {}};
  entry.declared = true;
  m_names.insert(entry.name);
  m_tensors.push_back(std::move(entry));
}

std::uint64_t SafetensorsWriter::byteCount(const Entry& entry) {
  return entry.declared ? *tensorByteSize(entry.dtype, entry.shape) : entry.bytes.size();
}

void SafetensorsWriter::setMetadata(std::string key, std::string value) {
  if (!isValidUtf8(key))
    throw SafetensorsError("__metadata__ key " + jsonQuoted(key) + " is not valid UTF-8");
  if (!isValidUtf8(value)) {
    throw SafetensorsError("__metadata__ value for " + jsonQuoted(key) + " is not valid UTF-8");
  }
  m_metadata[std::move(key)] = std::move(value);
}

std::vector<const SafetensorsWriter::Entry*> SafetensorsWriter::layout() const {
  std::vector<const Entry*> order;
  order.reserve(m_tensors.size());
  for (const Entry& entry : m_tensors) order.push_back(&entry);
  // Largest elements first keeps every tensor aligned to its element size; names break ties
  // (they are unique) so the file does not depend on the order of add() calls.
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    const std::size_t sizeA = dtypeSize(a->dtype);
    const std::size_t sizeB = dtypeSize(b->dtype);
    if (sizeA != sizeB) return sizeA > sizeB;
    return a->name < b->name;
  });
  return order;
}

std::string SafetensorsWriter::headerBytes(const std::vector<const Entry*>& order) const {
  // Written by hand rather than through nlohmann::json so the key order is ours (nlohmann sorts
  // object keys); strings still go through nlohmann for escaping.
  std::string json = "{";
  if (!m_metadata.empty()) {
    json += "\"__metadata__\":{";
    bool firstPair = true;
    for (const auto& [key, value] : m_metadata) {
      if (!firstPair) json += ',';
      firstPair = false;
      json += Json(key).dump() + ':' + Json(value).dump();
    }
    json += '}';
  }
  std::uint64_t offset = 0;
  for (const Entry* entry : order) {
    if (json.size() > 1) json += ',';
    json += Json(entry->name).dump();
    json += ":{\"dtype\":\"";
    json += dtypeName(entry->dtype);
    json += "\",\"shape\":[";
    for (std::size_t i = 0; i < entry->shape.size(); ++i) {
      if (i > 0) json += ',';
      json += std::to_string(entry->shape[i]);
    }
    const std::uint64_t end = offset + byteCount(*entry);
    json += "],\"data_offsets\":[" + std::to_string(offset) + ',' + std::to_string(end) + "]}";
    offset = end;
  }
  json += '}';
  // The reference pads with spaces so the data buffer starts 8-aligned in the file.
  json.append((8 - json.size() % 8) % 8, ' ');
  if (json.size() > SafetensorsView::kMaxHeaderBytes) {
    throw SafetensorsError("header of " + std::to_string(json.size()) +
                           " bytes exceeds the limit of " +
                           std::to_string(SafetensorsView::kMaxHeaderBytes) + " bytes");
  }

  std::string out(8, '\0');
  const std::uint64_t length = json.size();
  for (std::size_t i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((length >> (8 * i)) & 0xFF);
  }
  return out + json;
}

std::string SafetensorsWriter::serialize() const {
  const auto order = layout();
  std::string out = headerBytes(order);
  std::size_t total = out.size();
  for (const Entry* entry : order) {
    if (entry->declared)
      throw SafetensorsError(errorPrefix(entry->name) +
                             "declared: only writeFile() with a fill can write it");
    total += entry->bytes.size();
  }
  out.reserve(total);
  for (const Entry* entry : order) out.append(entry->bytes.data(), entry->bytes.size());
  return out;
}

void SafetensorsWriter::writeFile(const std::filesystem::path& path) const {
  writeFile(path, nullptr);
}

void SafetensorsWriter::writeFile(const std::filesystem::path& path,
                                  const std::function<void(const Put&)>& fill) const {
  const std::string at = path.string() + ": ";
  const auto order = layout();
  const std::string header = headerBytes(order);

  // Same folder, so the rename is atomic; O_EXCL so we never write through someone else's file.
  AtomicFile file(path);
  const std::filesystem::path& temporary = file.tempPath();
  FileDescriptor fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
  if (!fd.valid()) {
    throw SafetensorsError(at + "cannot create temporary file " + jsonQuoted(temporary.string()) +
                           ": " + systemError());
  }
  const auto fail = [&](const std::string& what) {
    throw SafetensorsError(at + what + ": " + systemError());
  };
  // Where each declared tensor goes, and whether fill has put it yet.
  struct Place {
    std::uint64_t offset;
    std::uint64_t bytes;
    bool written;
  };
  std::map<std::string, Place, std::less<>> declared;
  std::uint64_t offset = header.size();
  if (!writeAll(fd.get(), header)) fail("write failed");
  for (const Entry* entry : order) {
    if (entry->declared) {
      declared[entry->name] = {offset, byteCount(*entry), false};
      // The bytes come later, at their offset: the file needs its full length now.
      if (::lseek(fd.get(), static_cast<off_t>(byteCount(*entry)), SEEK_CUR) < 0)
        fail("seek failed");
    } else if (!writeAll(fd.get(), std::string_view(entry->bytes.data(), entry->bytes.size()))) {
      fail("write failed");
    }
    offset += byteCount(*entry);
  }
  if (::ftruncate(fd.get(), static_cast<off_t>(offset)) != 0) fail("truncate failed");
  if (fill || !declared.empty()) {
    try {
      if (!fill) throw SafetensorsError("tensors were declared but nothing fills them");
      fill([&](const std::string& name, const void* data, std::size_t bytes) {
        const auto it = declared.find(name);
        if (it == declared.end()) throw SafetensorsError(errorPrefix(name) + "was not declared");
        if (it->second.written) throw SafetensorsError(errorPrefix(name) + "written twice");
        if (bytes != it->second.bytes) {
          throw SafetensorsError(errorPrefix(name) + std::to_string(bytes) + " bytes given, " +
                                 std::to_string(it->second.bytes) + " declared");
        }
        const char* p = static_cast<const char*>(data);
        for (std::uint64_t done = 0; done < bytes;) {
          const ssize_t n = ::pwrite(fd.get(), p + done, bytes - done,
                                     static_cast<off_t>(it->second.offset + done));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) throw SafetensorsError(errorPrefix(name) + "write failed: " + systemError());
          done += static_cast<std::uint64_t>(n);
        }
        it->second.written = true;
      });
      for (const auto& [name, place] : declared) {
        if (!place.written)
          throw SafetensorsError(errorPrefix(name) + "declared but never written");
      }
    } catch (...) {
      fd.close();
      throw;  // the AtomicFile removes the temporary
    }
  }
  if (!fd.close()) fail("close failed");
  try {
    file.commit();  // fsync, rename, fsync of the folder
  } catch (const FileWriteError& e) {
    throw SafetensorsError(at + e.reason());
  }
}

}  // namespace tb::core
