#pragma once
// ClipShardWriter: the writing side of a shard folder (see clip_shards.h for the layout). Clips
// come in source order; each shard is written atomically as soon as it fills, and manifest.json
// last, so an interrupted pack leaves no manifest that claims missing shards. Torch-free.

#include "trainer/data/clip_shards.h"
#include "trainer/data/dataset_index.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tb::trainer::data {

/// What a finished pack holds.
struct PackTotals {
  std::int64_t shards = 0;
  std::int64_t clips = 0;
  std::int64_t sources = 0;  ///< sources with at least one clip
  std::int64_t frames = 0;   ///< frames stored: clips x num_frames
  std::uint64_t bytes = 0;   ///< bytes of all shard files
  std::string content_hash;  ///< "crc64:<16 hex digits>" of the shard files' bytes, in order
};

class ClipShardWriter {
 public:
  /// Writes into the existing folder `folder`; a shard holds the clips that fit in
  /// `shard_bytes` bytes of pixels (at least one).
  ClipShardWriter(std::filesystem::path folder, ShardSettings settings, std::uint64_t shard_bytes);

  /// Appends `count` consecutive clips of `source` (path relative to the packed folder, and the
  /// source's frames, fps and size for the manifest): `pixels` holds uint8 RGB
  /// [count, T, S, S, 3]; clip i starts at source frame frame_start + i * settings.clipStep().
  /// Writes a shard whenever one fills. Throws core::SafetensorsError or media::MediaError
  /// naming the file on a write failure.
  void append(const IndexedFile& source, int frame_start, const std::uint8_t* pixels,
              std::size_t count);

  /// A source pack left out, or cut short, and why; listed in the manifest's "skipped".
  void skip(SkippedFile file);

  /// Writes the last shard, then manifest.json; `packed_from` (data.path) is recorded in it.
  /// Call once, after the last append().
  PackTotals finish(const std::string& packed_from);

 private:
  struct Source {
    IndexedFile file;
    std::int64_t clips = 0;
  };
  struct Shard {
    std::string file;
    std::int64_t clips = 0;
    std::uint64_t bytes = 0;
    std::string crc64;
  };
  void writeShard();

  std::filesystem::path m_folder;
  ShardSettings m_settings;
  std::size_t m_clips_per_shard;
  std::vector<char> m_pixels;     ///< the shard being filled: [n, T, S, S, 3]
  std::string m_clip_list;        ///< its metadata "clips" entries, comma-separated JSON objects
  std::size_t m_pending = 0;      ///< clips in m_pixels
  std::vector<Source> m_sources;  ///< in order of their first clip
  std::vector<SkippedFile> m_skipped;
  std::vector<Shard> m_shards;
  Crc64 m_content;  ///< over every shard file's bytes, in order
  PackTotals m_totals;
};

}  // namespace tb::trainer::data
