#pragma once
// Torch-free reader and writer for the safetensors container
// (https://github.com/huggingface/safetensors), the weights format users load in Python with
// `safetensors.torch.load_file`.
//
// File layout:
//   bytes [0, 8)        N, the header length, u64 little-endian
//   bytes [8, 8 + N)    UTF-8 JSON object, padded with spaces (0x20):
//                         {"__metadata__": {"key": "value", ...},            (optional)
//                          "<tensor name>": {"dtype": "F32", "shape": [2, 3],
//                                            "data_offsets": [begin, end]}, ...}
//   bytes [8 + N, EOF)  the data buffer; every tensor's [begin, end) is relative to its start,
//                       row-major, little-endian, and the tensors tile the buffer exactly.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// Everything wrong with a safetensors file or a writer call: a malformed header, offsets that
/// do not tile the buffer, a size mismatch, an I/O failure. The message names the tensor or the
/// field at fault and, for files, starts with the path.
class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Element types, spelled in the header as "F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2",
/// "I64", "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL". Sub-byte types of newer
/// safetensors versions (F4, F6_*) are not supported and read as an unknown dtype.
enum class DType {
  F64,
  F32,
  F16,
  BF16,
  F8E4M3,
  F8E5M2,
  I64,
  I32,
  I16,
  I8,
  U64,
  U32,
  U16,
  U8,
  Bool
};

/// Bytes per element: 8, 4, 2 or 1 (BOOL is one byte, 0 or 1).
std::size_t dtypeSize(DType dtype);
/// The header spelling, e.g. "BF16", "BOOL".
std::string_view dtypeName(DType dtype);
/// Inverse of dtypeName (case-sensitive, as in the format); nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);

/// Bytes a tensor of this shape occupies: product(shape) * dtypeSize, where an empty shape is a
/// scalar (one element). nullopt when a dimension is negative or the product overflows 64 bits
/// (checked left to right, as the reference implementation does, so [2^62, 2^62, 0] overflows).
std::optional<std::uint64_t> tensorByteSize(DType dtype, const std::vector<std::int64_t>& shape);

/// One tensor as the header describes it. [begin, end) is relative to the data buffer, and
/// end - begin == tensorByteSize(dtype, shape) for every TensorInfo a parser returns.
struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<std::int64_t> shape;  ///< every dimension >= 0; empty means a scalar
  std::uint64_t begin = 0;
  std::uint64_t end = 0;

  std::uint64_t byteSize() const { return end - begin; }
};

/// A validated, read-only view of a complete safetensors file image held in memory. It does not
/// own the bytes: they must outlive the view and every string_view it hands out. Copying a view
/// is cheap (it copies the header, not the data).
class SafetensorsView {
 public:
  /// Parses and validates everything the format promises (see safetensors.cpp for the list):
  /// on return every tensor's bytes lie inside `bytes`. Throws SafetensorsError otherwise; never
  /// allocates more than the header length (at most kMaxHeaderBytes) plus its parsed form.
  static SafetensorsView parse(std::string_view bytes);
  /// A temporary string would die before the view: keep the bytes in a variable.
  static SafetensorsView parse(std::string&& bytes) = delete;

  /// Largest header accepted, and the bound on what the header can make us allocate. It is the
  /// reference implementation's limit (100 MB, not MiB), so that the writer never emits a file
  /// Python refuses and the reader accepts everything Python does.
  static constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;
  /// Deepest JSON nesting accepted in a header; a valid one needs 3 (object, entry, shape).
  static constexpr int kMaxJsonDepth = 64;

  /// All tensors, sorted by data offset (ties, only possible between zero-size tensors, by name).
  const std::vector<TensorInfo>& tensors() const { return m_tensors; }
  /// The tensor called `name`, or nullptr. The pointer lives as long as this view.
  const TensorInfo* find(std::string_view name) const;
  /// The "__metadata__" object: string keys to string values; empty when absent.
  const std::map<std::string, std::string>& metadata() const { return m_metadata; }
  /// The raw little-endian bytes of `tensor`, which must come from this view's tensors().
  std::string_view data(const TensorInfo& tensor) const;
  /// The whole data buffer (everything after the padded header).
  std::string_view dataBuffer() const { return m_data; }

 private:
  std::vector<TensorInfo> m_tensors;
  std::map<std::string, std::size_t, std::less<>> m_index;  // name -> position in m_tensors
  std::map<std::string, std::string> m_metadata;
  std::string_view m_data;
};

/// A safetensors file read from disk into memory it owns, with its validated view. Movable, not
/// copyable (the view points into the owned bytes).
class SafetensorsFile {
 public:
  /// Reads the whole file and parses it; errors are SafetensorsError starting with "<path>: ".
  static SafetensorsFile read(const std::filesystem::path& path);

  SafetensorsFile(SafetensorsFile&&) = default;
  SafetensorsFile& operator=(SafetensorsFile&&) = default;
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const SafetensorsView& view() const { return m_view; }
  const std::vector<TensorInfo>& tensors() const { return m_view.tensors(); }
  const TensorInfo* find(std::string_view name) const { return m_view.find(name); }
  const std::map<std::string, std::string>& metadata() const { return m_view.metadata(); }
  std::string_view data(const TensorInfo& tensor) const { return m_view.data(tensor); }

 private:
  SafetensorsFile() = default;
  // A vector, not a std::string: moving it keeps the buffer in place, so m_view stays valid
  // (a short std::string would move its bytes out of the small-string buffer).
  std::vector<char> m_bytes;
  SafetensorsView m_view;
};

/// Builds a safetensors file that Python's `safetensors.torch.load_file` accepts.
///
/// Layout written: tensors sorted by element size (largest first) and then by name, so every
/// tensor starts at a multiple of its element size (the buffer starts 8-aligned) and the bytes
/// do not depend on the order of add() calls; offsets tile the buffer with no gaps; the header
/// is compact JSON ("__metadata__" first, when set, then tensors in buffer order) padded with
/// spaces so that 8 + N is a multiple of 8. Tensor bytes are copied as given: pass them
/// little-endian (the host order on every platform Tokenbench builds for).
class SafetensorsWriter {
 public:
  /// Copies `bytes` bytes from `data` (which may be null only when bytes == 0). Throws
  /// SafetensorsError when the name is "__metadata__", is not valid UTF-8 or was added before,
  /// when a dimension is negative or the byte count overflows, or when bytes !=
  /// tensorByteSize(dtype, shape).
  void add(std::string name, DType dtype, std::vector<std::int64_t> shape, const void* data,
           std::size_t bytes);
  /// The same, taking over `bytes` instead of copying them: a large tensor (a clip shard of
  /// hundreds of MB) is held once, not twice.
  void add(std::string name, DType dtype, std::vector<std::int64_t> shape,
           std::vector<char>&& bytes);
  /// Sets (or replaces) one "__metadata__" entry; key and value must be valid UTF-8.
  void setMetadata(std::string key, std::string value);

  std::size_t tensorCount() const { return m_tensors.size(); }

  /// The complete file image; identical for identical contents.
  std::string serialize() const;
  /// Writes serialize()'s bytes to `path` atomically: a temporary file in the same folder,
  /// fsync, rename over `path`, fsync of the folder. On failure `path` is untouched, the
  /// temporary file is removed, and SafetensorsError names the path and the system error.
  void writeFile(const std::filesystem::path& path) const;

 private:
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<char> bytes;
  };
  // Throws unless a tensor of this name, dtype, shape and byte count may be added.
  void checkNewTensor(const std::string& name, DType dtype, const std::vector<std::int64_t>& shape,
                      std::size_t bytes) const;
  // Entries in buffer order.
  std::vector<const Entry*> layout() const;
  // The 8-byte length prefix and the padded header, for entries in `order`.
  std::string headerBytes(const std::vector<const Entry*>& order) const;

  std::vector<Entry> m_tensors;
  std::set<std::string, std::less<>> m_names;
  std::map<std::string, std::string> m_metadata;
};

}  // namespace tb::core
