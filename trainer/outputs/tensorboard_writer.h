#pragma once
// TensorBoardWriter: TensorBoard event files (TFRecord framing of tensorflow.Event protobufs),
// written without TensorFlow or a protobuf library, and a strict reader for them. Plain C++.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tb::trainer::outputs {

/// Summary.Image: an encoded image file (PNG or GIF bytes), not raw pixels.
struct TensorBoardImage {
  int width = 0;
  int height = 0;
  /// 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA (TensorBoard's meaning of Summary.Image.colorspace).
  int colorspace = 0;
  std::vector<uint8_t> encoded;
};

/// Summary.Value: a tag with a scalar or an image (other kinds are skipped by the reader, so a
/// value read back may have neither).
struct TensorBoardValue {
  std::string tag;
  std::optional<float> simpleValue;
  std::optional<TensorBoardImage> image;
};

/// One tensorflow.Event as stored in a record of an event file.
struct TensorBoardRecord {
  /// Seconds since the Unix epoch.
  double wallTime = 0.0;
  int64_t step = 0;
  /// Only in the first record of a file: "brain.Event:2".
  std::string fileVersion;
  std::vector<TensorBoardValue> values;
  /// Byte offset of the record's framing in the file (set by the reader, ignored when encoding).
  uint64_t offset = 0;
};

/// Appends events to a new file "events.out.tfevents.<unix seconds>.<hostname>.<pid>.tokenbench"
/// in a folder, the naming `tensorboard --logdir` looks for. Should that name be taken already (a
/// second writer in the same folder within the same second), ".<n>" goes before ".tokenbench".
/// Every add* call writes whole records and flushes them to the kernel before returning, so a
/// trainer that is killed leaves only complete records. Any I/O error throws std::runtime_error
/// naming the file; invalid arguments throw std::invalid_argument. Calls may come from any thread.
class TensorBoardWriter {
 public:
  /// Creates `folder` (and its parents) when missing, then the file, whose first record is an
  /// Event with the wall time and file_version "brain.Event:2".
  explicit TensorBoardWriter(const std::filesystem::path& folder);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  /// Current time in seconds since the Unix epoch, with sub-second precision.
  static double now();

  /// One scalar. TensorBoard stores scalars as float, so `value` is rounded to float.
  void addScalar(const std::string& tag, int64_t step, double value, double wallTime = now());
  /// Several scalars of the same step in one Event (one Summary.Value each, in order); an empty
  /// list writes nothing.
  void addScalars(int64_t step, const std::vector<std::pair<std::string, double>>& values,
                  double wallTime = now());
  /// One image: `encoded` is a whole PNG or GIF file (checked by its signature) of
  /// width x height pixels with `channels` in [1, 4] (the Summary.Image colorspace).
  void addImage(const std::string& tag, int64_t step, int width, int height, int channels,
                const std::vector<uint8_t>& encoded, double wallTime = now());

  /// Flushes to the kernel (each add* already does); the file stays open.
  void flush();

  const std::filesystem::path& path() const { return m_path; }

 private:
  void writeEvent(const TensorBoardRecord& event);

  std::filesystem::path m_path;
  std::FILE* m_file = nullptr;
  std::mutex m_mutex;
};

/// Reads every record of an event file, checking the framing and both CRCs of each record.
/// Throws std::runtime_error naming the file and the record's byte offset on a CRC mismatch, a
/// truncated record or a malformed Event. Unknown protobuf fields are skipped.
std::vector<TensorBoardRecord> readTensorBoardFile(const std::filesystem::path& path);

namespace detail {

/// CRC32C (Castagnoli), as TFRecord uses it. crc32c("123456789") == 0xE3069283.
uint32_t crc32c(const uint8_t* data, std::size_t size);
/// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
uint32_t maskCrc(uint32_t crc);
/// The tensorflow.Event protobuf bytes of `event` (proto3: zero scalars and empty strings are
/// left out; simple_value, a oneof member, is always written when present).
std::vector<uint8_t> encodeEvent(const TensorBoardRecord& event);
/// One TFRecord: length (uint64 LE), masked CRC of the length, the data, masked CRC of the data.
std::vector<uint8_t> frameRecord(const std::vector<uint8_t>& data);

}  // namespace detail

}  // namespace tb::trainer::outputs
