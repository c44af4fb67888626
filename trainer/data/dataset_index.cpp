#include "trainer/data/dataset_index.h"

#include "core/atomic_file.h"
#include "trainer/media/media_error.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_decoder.h"
#endif
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <thread>

namespace tb::trainer::data {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// 2: frames counted by demuxing in every container (cut mp4/avi files are skipped, avi files
// with dropped frames have their real count). 3: files with two frames on one frame period are
// numbered by counting.
constexpr int kCacheVersion = 3;

// What probing one file found; cached by (path, bytes, mtime).
struct Probe {
  std::int64_t bytes = -1;
  std::int64_t mtime_ns = 0;
  IndexedFile file;
  std::string error;  // non-empty: unusable
};

std::int64_t modificationTime(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  return ec ? 0 : static_cast<std::int64_t>(t.time_since_epoch().count());
}

std::int64_t fileBytes(const fs::path& p) {
  std::error_code ec;
  const auto n = fs::file_size(p, ec);
  return ec ? -1 : static_cast<std::int64_t>(n);
}

Probe probeFile([[maybe_unused]] const fs::path& path,
                media::MediaKind kind) {  // unused without FFmpeg
  Probe probe;
  try {
    if (kind == media::MediaKind::Video) {
#if TB_WITH_FFMPEG
      const media::VideoInfo info = media::probeVideo(path.string());
      if (!info.warning.empty()) {
        probe.error = info.warning;
      } else {
        probe.file.frames = info.frameCount;
        probe.file.fps = info.fps;
        probe.file.width = info.width;
        probe.file.height = info.height;
        probe.file.sparse_timestamps = info.sparseTimestamps;
      }
#else
      probe.error = "this build has no FFmpeg (TB_WITH_FFMPEG=OFF): videos cannot be read";
#endif
    } else {
#if TB_WITH_OPENCV
      const media::VideoFrames image = media::ImageReader::read(path.string());
      probe.file.frames = 1;
      probe.file.width = image.width;
      probe.file.height = image.height;
#else
      probe.error = "this build has no OpenCV (TB_WITH_OPENCV=OFF): images cannot be read";
#endif
    }
  } catch (const media::MediaError& e) {
    probe.error = e.reason();
  } catch (const std::exception& e) {
    probe.error = e.what();
  }
  if (probe.error.empty() && (probe.file.width < 1 || probe.file.height < 1))
    probe.error = "empty picture";
  return probe;
}

std::map<std::string, Probe> readCache(const fs::path& file, const fs::path& root,
                                       media::MediaKind kind) {
  std::map<std::string, Probe> cache;
  if (file.empty()) return cache;
  std::ifstream in(file);
  if (!in) return cache;
  // A damaged or foreign cache is ignored (everything is probed again), never an error.
  const Json j = Json::parse(in, nullptr, false);
  if (!j.is_object() || j.value("version", 0) != kCacheVersion ||
      j.value("root", "") != root.string() ||
      j.value("kind", "") != (kind == media::MediaKind::Video ? "videos" : "images") ||
      !j.contains("entries") || !j["entries"].is_array()) {
    return cache;
  }
  try {
    for (const auto& e : j["entries"]) {
      Probe p;
      p.file.path = e.at("path").get<std::string>();
      p.bytes = e.at("bytes").get<std::int64_t>();
      p.mtime_ns = e.at("mtime_ns").get<std::int64_t>();
      p.error = e.value("error", "");
      p.file.frames = e.value("frames", 0);
      p.file.fps = e.value("fps", 0.0);
      p.file.width = e.value("width", 0);
      p.file.height = e.value("height", 0);
      p.file.sparse_timestamps = e.value("sparse_timestamps", false);
      cache[p.file.path] = p;
    }
  } catch (const Json::exception&) {
    cache.clear();
  }
  return cache;
}

void writeCache(const fs::path& file, const fs::path& root, media::MediaKind kind,
                const std::vector<Probe>& probes) {
  Json entries = Json::array();
  for (const auto& p : probes) {
    Json e = {{"path", p.file.path}, {"bytes", p.bytes}, {"mtime_ns", p.mtime_ns}};
    if (!p.error.empty()) {
      e["error"] = p.error;
    } else {
      e["frames"] = p.file.frames;
      e["fps"] = p.file.fps;
      e["width"] = p.file.width;
      e["height"] = p.file.height;
      if (p.file.sparse_timestamps) e["sparse_timestamps"] = true;
    }
    entries.push_back(std::move(e));
  }
  const Json j = {{"version", kCacheVersion},
                  {"root", root.string()},
                  {"kind", kind == media::MediaKind::Video ? "videos" : "images"},
                  {"entries", std::move(entries)}};
  // The cache is an optimisation: failing to write it (full disk, read-only run dir) only
  // costs the next run a re-probe.
  try {
    fs::create_directories(file.parent_path());
    core::writeFileAtomically(file, j.dump(1) + "\n");
  } catch (const std::exception&) {
  }
}

}  // namespace

DatasetIndex buildDatasetIndex(const fs::path& root, const IndexOptions& options) {
  DatasetIndex index;
  index.root = root;
  const std::vector<std::string> paths = media::scanMediaFolder(root.string(), options.kind);
  const auto cache = readCache(options.cache_file, root, options.kind);

  std::vector<Probe> probes(paths.size());
  std::vector<std::size_t> to_probe;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const fs::path abs = paths[i];
    const std::string rel = fs::path(paths[i]).lexically_relative(root).generic_string();
    const std::int64_t bytes = fileBytes(abs), mtime = modificationTime(abs);
    const auto hit = cache.find(rel);
    if (hit != cache.end() && hit->second.bytes == bytes && hit->second.mtime_ns == mtime) {
      probes[i] = hit->second;
      ++index.reused;
    } else {
      probes[i].bytes = bytes;
      probes[i].mtime_ns = mtime;
      to_probe.push_back(i);
    }
    probes[i].file.path = rel;
  }

  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < to_probe.size();) {
      Probe& slot = probes[to_probe[k]];
      Probe found = probeFile(paths[to_probe[k]], options.kind);
      found.file.path = slot.file.path;
      found.bytes = slot.bytes;
      found.mtime_ns = slot.mtime_ns;
      slot = std::move(found);
    }
  };
  const int threads =
      std::max(1, std::min<int>(options.threads, static_cast<int>(to_probe.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  index.probed = static_cast<int>(to_probe.size());

  for (const auto& p : probes) {
    if (!p.error.empty()) {
      index.skipped.push_back({p.file.path, p.error});
    } else if (p.file.frames < options.min_frames) {
      index.skipped.push_back({p.file.path, "too short: " + std::to_string(p.file.frames) +
                                                " frames, a clip needs " +
                                                std::to_string(options.min_frames)});
    } else {
      index.files.push_back(p.file);
    }
  }
  if (!options.cache_file.empty() &&
      (index.probed > 0 || index.reused != static_cast<int>(cache.size()))) {
    writeCache(options.cache_file, root, options.kind, probes);
  }
  return index;
}

std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> splitFiles(std::int64_t count,
                                                                           double valid_fraction,
                                                                           std::uint64_t seed) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)));
  std::iota(order.begin(), order.end(), 0);
  std::int64_t n_valid = 0;
  if (valid_fraction > 0 && count >= 2) {
    n_valid = std::clamp<std::int64_t>(std::llround(static_cast<double>(count) * valid_fraction), 1,
                                       count - 1);
  }
  std::mt19937_64 rng(seed ^ 0x5eed5b1175ULL);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::int64_t> valid(order.begin(), order.begin() + n_valid);
  std::vector<std::int64_t> train(order.begin() + n_valid, order.end());
  std::sort(valid.begin(), valid.end());
  std::sort(train.begin(), train.end());
  return {train, valid};
}

}  // namespace tb::trainer::data
