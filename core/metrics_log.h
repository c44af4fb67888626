#pragma once
// metrics.jsonl: the durable record of scalar metrics, one flat JSON object per line:
//
//   {"step":120,"wall_time":1733140000.5,"train/recon_loss":0.071,"val/psnr":null}
//
// "step" (integer, optimizer steps) and "wall_time" (seconds since the Unix epoch) come first,
// then metric values in emission order. JSON has no NaN/Inf: non-finite values are written as
// null and read back as NaN. The format matches what Python tools write, so readers are lenient:
// a line is malformed only if it is not a JSON object or lacks an integer "step"; a missing or
// non-numeric wall_time reads as NaN and non-numeric metric fields are skipped.
//
// Rank 0 appends (MetricsWriter); any number of readers tail the file (MetricsFollower), also
// over a shared file system while a cluster job writes it.

#include "core/event_protocol.h"
#include "core/file_tail.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tb::core {

/// Longest metrics line a reader keeps (bytes); longer lines count as malformed.
inline constexpr std::size_t kMaxMetricsLineBytes = std::size_t{1} << 20;

struct MetricsRow {
  std::int64_t step = 0;   ///< optimizer step
  double wall_time = 0.0;  ///< seconds since the Unix epoch (NaN when the line had none)
  /// name -> value in file order; NaN for null. Names must not be "step" or "wall_time"; a
  /// repeated name is written once (last value, first position).
  std::vector<std::pair<std::string, double>> values;
};

/// One line (no newline). Throws std::invalid_argument when a value is named "step" or
/// "wall_time" (it would shadow the row's own fields).
std::string formatMetricsLine(const MetricsRow& row);

/// Parses one line (a trailing '\r' is ignored); nullopt when malformed. Never throws.
std::optional<MetricsRow> parseMetricsLine(std::string_view line);

/// Appends rows to a metrics file, one write + fflush per row, so that a reader (or a crash)
/// sees whole lines as soon as possible. Owns the FILE*; movable, not copyable.
class MetricsWriter {
 public:
  /// Opens (creating if needed) `path` for appending. If the file ends in an unterminated line
  /// (a previous run crashed mid-write), a '\n' is written first so that the next row starts on
  /// a line of its own. Throws std::runtime_error with the path and strerror on failure.
  explicit MetricsWriter(std::filesystem::path path);
  ~MetricsWriter();
  MetricsWriter(MetricsWriter&& other) noexcept;
  MetricsWriter& operator=(MetricsWriter&& other) noexcept;
  MetricsWriter(const MetricsWriter&) = delete;
  MetricsWriter& operator=(const MetricsWriter&) = delete;

  /// Writes one line and flushes it. Throws std::runtime_error (path and strerror, e.g. "No
  /// space left on device") when the write or flush fails, std::invalid_argument as
  /// formatMetricsLine.
  void append(const MetricsRow& row);

  /// Closes the file; later append() calls throw. Throws std::runtime_error if the final close
  /// reports an error. The destructor closes silently.
  void close();

  const std::filesystem::path& path() const { return m_path; }

 private:
  [[noreturn]] void throwIoError(const char* what, int error) const;

  std::filesystem::path m_path;
  std::FILE* m_file = nullptr;
};

/// Tails a metrics file that another process may be appending to, through a FileTail (see there:
/// partial lines, truncation, replacement and rewrites, irregular files). When reading starts
/// over it counts a reset, and the caller should drop the rows it had. Never throws on file
/// content or I/O errors.
class MetricsFollower {
 public:
  explicit MetricsFollower(std::filesystem::path path);

  /// New complete rows, in file order; empty when the file does not exist (yet).
  std::vector<MetricsRow> poll();

  /// Times reading started over (truncation, replacement, rewrite).
  std::size_t resets() const { return m_tail.resets(); }
  /// Lines skipped as malformed since construction (not cleared by resets).
  std::size_t malformedLines() const { return m_malformedLines; }
  /// Bytes consumed from the current file, partial line included.
  std::uint64_t offset() const { return m_tail.offset(); }
  const std::filesystem::path& path() const { return m_tail.path(); }

 private:
  FileTail m_tail;
  std::size_t m_malformedLines = 0;
};

}  // namespace tb::core
