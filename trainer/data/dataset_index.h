#pragma once
// DatasetIndex: what a video or image folder holds (frames, fps, size per file) and which files
// cannot be used and why. Probing a large folder takes minutes, so the index is cached in the
// run directory and entries whose file is unchanged (same size and modification time) are
// reused. Torch-free.

#include "trainer/media/media_folder.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tb::trainer::data {

/// One usable file. `path` is relative to the dataset root, with forward slashes.
struct IndexedFile {
  std::string path;
  int frames = 0;  ///< 1 for images
  double fps = 0;  ///< 0 for images
  int width = 0;
  int height = 0;
  bool sparse_timestamps = false;  ///< frames numbered in order only (media::VideoInfo)
};

/// A file left out, and why ("truncated: got 7 of 16 frames", "too short: ...", "cannot decode
/// image").
struct SkippedFile {
  std::string path;
  std::string reason;
};

struct DatasetIndex {
  std::filesystem::path root;
  std::vector<IndexedFile> files;    ///< in scan order (sorted by path)
  std::vector<SkippedFile> skipped;  ///< in scan order
  int probed = 0;                    ///< files opened by this build of the index
  int reused = 0;                    ///< files taken from the cache without opening them

  std::filesystem::path absolute(const IndexedFile& f) const { return root / f.path; }
};

struct IndexOptions {
  media::MediaKind kind = media::MediaKind::Video;
  /// Files with fewer frames are skipped ("too short"): (num_frames - 1) * frame_stride + 1.
  int min_frames = 1;
  int threads = 1;  ///< files probed in parallel
  /// Cache file to read and (atomically) rewrite; empty: no cache.
  std::filesystem::path cache_file;
};

/// Scans `root` recursively (media::scanMediaFolder) and probes every file: videos with FFmpeg
/// (frame count, fps, size; damaged files are skipped with the decoder's reason), images with
/// OpenCV. Throws media::MediaError when `root` does not exist; an empty result is not an error
/// here (the caller decides). Probe failures never throw.
DatasetIndex buildDatasetIndex(const std::filesystem::path& root, const IndexOptions& options);

/// Deterministic split of `count` files: a seeded shuffle, the first
/// round(count * valid_fraction) (at least 1 when valid_fraction > 0 and count >= 2, and
/// always leaving one for training) are validation files. Returns {train, valid}, each sorted.
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> splitFiles(std::int64_t count,
                                                                           double valid_fraction,
                                                                           std::uint64_t seed);

}  // namespace tb::trainer::data
