#include "core/metrics_log.h"

#include "core/posix_io.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace tb::core {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

std::string formatMetricsLine(const MetricsRow& row) {
  Json j = Json::object();
  j["step"] = row.step;
  j["wall_time"] = std::isfinite(row.wall_time) ? Json(row.wall_time) : Json(nullptr);
  for (const auto& [name, value] : row.values) {
    if (name == "step" || name == "wall_time") {
      throw std::invalid_argument("metric name \"" + name + "\" is reserved in metrics.jsonl");
    }
    j[name] = std::isfinite(value) ? Json(value) : Json(nullptr);
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<MetricsRow> parseMetricsLine(std::string_view line) {
  if (line.size() > kMaxMetricsLineBytes) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || jsonNestingDepth(line) > kMaxEventNestingDepth) return std::nullopt;
  try {
    Json parsed;
    try {
      parsed = Json::parse(line.begin(), line.end());
    } catch (const Json::exception&) {
      return std::nullopt;
    }
    if (!parsed.is_object()) return std::nullopt;

    const auto step = parsed.find("step");
    if (step == parsed.end() || !step->is_number_integer()) return std::nullopt;
    MetricsRow row;
    if (step->is_number_unsigned()) {
      const auto raw = step->get<std::uint64_t>();
      if (raw > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
      }
      row.step = static_cast<std::int64_t>(raw);
    } else {
      row.step = step->get<std::int64_t>();
    }

    row.wall_time = std::numeric_limits<double>::quiet_NaN();
    row.values.reserve(parsed.size());
    for (const auto& [key, value] : parsed.items()) {
      if (key == "step") continue;
      const bool numeric = value.is_number();
      if (!numeric && !value.is_null()) continue;  // strings, flags... from other tools
      const double number =
          numeric ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
      if (key == "wall_time") {
        row.wall_time = number;
      } else {
        row.values.emplace_back(key, number);
      }
    }
    return row;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// --- MetricsWriter -------------------------------------------------------------------------

MetricsWriter::MetricsWriter(std::filesystem::path path) : m_path(std::move(path)) {
  m_file = std::fopen(m_path.c_str(), "ab+e");  // e: O_CLOEXEC
  if (m_file == nullptr) throwIoError("cannot open", errno);
  // Unbuffered: each row is one write(), so a failed one can be taken back whole (append), and
  // no half row waits in a buffer for a later flush.
  std::setvbuf(m_file, nullptr, _IONBF, 0);

  // Only a regular, non-empty file can end in a torn line (not /dev/full, a FIFO, ...).
  struct stat st {};
  if (::fstat(fileno(m_file), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    char last = '\n';
    if (readAt(fileno(m_file), &last, 1, static_cast<std::uint64_t>(st.st_size - 1)) == 1 &&
        last != '\n') {
      if (std::fputc('\n', m_file) == EOF || std::fflush(m_file) != 0) {
        const int error = errno;
        std::fclose(m_file);
        m_file = nullptr;
        throwIoError("cannot write", error);
      }
    }
  }
}

MetricsWriter::~MetricsWriter() {
  if (m_file != nullptr) std::fclose(m_file);
}

MetricsWriter::MetricsWriter(MetricsWriter&& other) noexcept
    : m_path(std::move(other.m_path)), m_file(other.m_file) {
  other.m_file = nullptr;
}

MetricsWriter& MetricsWriter::operator=(MetricsWriter&& other) noexcept {
  if (this != &other) {
    if (m_file != nullptr) std::fclose(m_file);
    m_path = std::move(other.m_path);
    m_file = other.m_file;
    other.m_file = nullptr;
  }
  return *this;
}

void MetricsWriter::append(const MetricsRow& row) {
  if (m_file == nullptr) throwIoError("cannot write (closed)", EBADF);
  std::string line = formatMetricsLine(row);
  line.push_back('\n');
  // Where the file ends now: a row the disk takes only part of is cut off again, so the file
  // holds whole lines only (a full disk, a file size limit).
  struct stat st {};
  const bool regular = ::fstat(fileno(m_file), &st) == 0 && S_ISREG(st.st_mode);
  errno = 0;
  if (std::fwrite(line.data(), 1, line.size(), m_file) != line.size() || std::fflush(m_file) != 0) {
    const int error = errno != 0 ? errno : EIO;
    std::clearerr(m_file);
    if (regular) (void)::ftruncate(fileno(m_file), st.st_size);
    throwIoError("cannot write", error);
  }
}

void MetricsWriter::close() {
  if (m_file == nullptr) return;
  std::FILE* file = m_file;
  m_file = nullptr;
  if (std::fclose(file) != 0) throwIoError("cannot close", errno);
}

void MetricsWriter::throwIoError(const char* what, int error) const {
  throw std::runtime_error(std::string(what) + " metrics file " + m_path.string() + ": " +
                           std::strerror(error));
}

// --- MetricsFollower -----------------------------------------------------------------------

MetricsFollower::MetricsFollower(std::filesystem::path path)
    : m_tail(std::move(path), kMaxMetricsLineBytes) {}

std::vector<MetricsRow> MetricsFollower::poll() {
  std::vector<MetricsRow> rows;
  FileTail::Result read = m_tail.poll();
  m_malformedLines += read.oversized;
  rows.reserve(read.lines.size());
  for (const std::string& line : read.lines) {
    if (std::optional<MetricsRow> row = parseMetricsLine(line)) {
      rows.push_back(std::move(*row));
    } else {
      ++m_malformedLines;
    }
  }
  return rows;
}

}  // namespace tb::core
