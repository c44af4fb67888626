#include "core/run_directory.h"
#include "core/checkpoint_files.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace tb::core {
namespace fs = std::filesystem;

namespace {

void requireNonNegative(std::int64_t step) {
  if (step < 0) {
    throw std::invalid_argument("checkpoint step must be >= 0, got " + std::to_string(step));
  }
}

// "step_<N>" with N a canonical non-negative decimal (no sign, no leading zeros), so that names
// map one to one onto checkpointDir().
std::optional<std::int64_t> parseStepFolderName(const std::string& name) {
  constexpr std::string_view kPrefix = "step_";
  if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) {
    return std::nullopt;
  }
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size();
  if (*first < '0' || *first > '9') return std::nullopt;
  if (*first == '0' && last - first > 1) return std::nullopt;
  std::int64_t step = 0;
  const auto [end, ec] = std::from_chars(first, last, step);
  if (ec != std::errc() || end != last) return std::nullopt;
  return step;
}

}  // namespace

RunDirectory::RunDirectory(fs::path root) : m_root(std::move(root)) {}

fs::path RunDirectory::configFile() const { return m_root / checkpoint_files::kConfig; }
fs::path RunDirectory::metricsFile() const { return m_root / "metrics.jsonl"; }
fs::path RunDirectory::indexCacheFile() const { return m_root / "data_index.json"; }
fs::path RunDirectory::lockFile() const { return m_root / ".lock"; }
fs::path RunDirectory::tensorboardDir() const { return m_root / "tensorboard"; }
fs::path RunDirectory::samplesDir() const { return m_root / "samples"; }
fs::path RunDirectory::eventsFile() const { return m_root / "events.jsonl"; }
fs::path RunDirectory::codebookDir() const { return m_root / "codebook"; }
fs::path RunDirectory::checkpointsDir() const { return m_root / "checkpoints"; }
fs::path RunDirectory::logsDir() const { return m_root / "logs"; }
fs::path RunDirectory::referenceDir() const { return m_root / "reference"; }
fs::path RunDirectory::referenceInfoFile() const { return referenceDir() / "reference.json"; }

fs::path RunDirectory::checkpointDir(std::int64_t step) const {
  requireNonNegative(step);
  return checkpointsDir() / ("step_" + std::to_string(step));
}

fs::path RunDirectory::codebookFile(std::int64_t step) const {
  requireNonNegative(step);
  return codebookDir() / ("step_" + std::to_string(step) + ".safetensors");
}

fs::path RunDirectory::checkpointTempDir(std::int64_t step) const {
  requireNonNegative(step);
  return checkpointsDir() / (".step_" + std::to_string(step) + ".tmp");
}

void RunDirectory::create() const {
  for (const fs::path& dir :
       {m_root, tensorboardDir(), samplesDir(), checkpointsDir(), logsDir()}) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    // create_directories reports success for an existing non-directory on some library
    // versions: check what is there.
    if (!ec && !fs::is_directory(dir, ec) && !ec) {
      ec = std::make_error_code(std::errc::not_a_directory);
    }
    if (ec) {
      throw std::runtime_error("cannot create run directory folder " + dir.string() + ": " +
                               ec.message());
    }
  }
}

std::vector<fs::path> RunDirectory::layoutEntries() const {
  return {configFile(), metricsFile(), indexCacheFile(), lockFile(), tensorboardDir(), samplesDir(),
          eventsFile(), codebookDir(), checkpointsDir(), logsDir(),  referenceDir()};
}

fs::path RunDirectory::firstLinkedEntry() const {
  std::error_code ec;
  if (fs::is_symlink(m_root, ec)) return {};  // the root itself may be a link the user made
  for (const fs::path& entry : layoutEntries())
    if (fs::is_symlink(entry, ec)) return entry;
  return {};
}

bool RunDirectory::holdsOnlyOtherFiles() const {
  std::error_code ec;
  if (!fs::is_directory(m_root, ec) || fs::is_empty(m_root, ec)) return false;
  for (const fs::path& entry : layoutEntries())
    if (fs::symlink_status(entry, ec).type() != fs::file_type::not_found) return false;
  return true;
}

std::string RunDirectory::writeProblem() const {
  if (const fs::path link = firstLinkedEntry(); !link.empty())
    return link.string() +
           " is a symbolic link: a run writes its files and folders in place, never through a "
           "link";
  if (holdsOnlyOtherFiles())
    return m_root.string() +
           " holds files, none of them a run's (config.json, metrics.jsonl, events.jsonl, "
           "checkpoints/, ...): a run is written into a new or empty folder";
  return {};
}

bool RunDirectory::contains(const fs::path& path) const {
  try {
    std::error_code ec;
    const fs::path rootAbs = fs::absolute(m_root, ec);
    if (ec) return false;
    const fs::path root = fs::weakly_canonical(rootAbs, ec);
    if (ec) return false;
    const fs::path candidate = fs::weakly_canonical(path.is_absolute() ? path : rootAbs / path, ec);
    if (ec) return false;

    // Component-wise prefix test: "/runs/a" must not contain "/runs/ab". A trailing empty
    // component (from "dir/") on either side carries no meaning.
    auto r = root.begin();
    auto c = candidate.begin();
    for (; r != root.end(); ++r) {
      if (r->empty()) continue;
      while (c != candidate.end() && c->empty()) ++c;
      if (c == candidate.end() || *r != *c) return false;
      ++c;
    }
    return true;
  } catch (...) {
    // fs::absolute/weakly_canonical may still allocate and throw; the answer is "no".
    return false;
  }
}

std::vector<std::int64_t> RunDirectory::listCheckpointSteps() const {
  std::vector<std::int64_t> steps;
  try {
    std::error_code ec;
    fs::directory_iterator it(checkpointsDir(), ec);
    if (ec) return steps;
    for (const fs::directory_iterator end; it != end; it.increment(ec)) {
      if (ec) break;
      const fs::directory_entry& entry = *it;
      std::error_code entryEc;
      if (!entry.is_directory(entryEc)) continue;
      const std::optional<std::int64_t> step =
          parseStepFolderName(entry.path().filename().string());
      if (!step) continue;
      if (!fs::is_regular_file(entry.path() / checkpoint_files::kComplete, entryEc)) continue;
      steps.push_back(*step);
    }
  } catch (...) {
    // A folder vanishing mid-listing is normal on a live run; report what was seen.
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

}  // namespace tb::core
