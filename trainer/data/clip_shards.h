#pragma once
// ClipShards: a folder of pre-decoded clips (written by `tokenbench-trainer pack`), read through
// read-only memory maps, so a GPU machine trains without FFmpeg or OpenCV and without decoding.
// Torch-free.
//
// Folder layout:
//   manifest.json              format, version, pack settings, sources, shards (file, clips,
//                              bytes, crc64), totals, skipped files, content hash; written last
//   shard_00000.safetensors    one tensor "clips": uint8 [N, T, S, S, 3] (RGB, S = image_size),
//   shard_00001.safetensors    metadata: the pack settings and, under "clips", a JSON array
//   ...                        naming each clip's source (relative to the packed folder),
//                              frame_start, frame_stride and frame_count

#include "trainer/data/dataset_index.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tb::trainer::data {

/// CRC-64/XZ (ECMA-182 polynomial, reflected, as xz and Go's crc64.ECMA compute it), the
/// manifest's content hashes. Incremental: update() in pieces gives the CRC of the whole.
/// Crc64 of "123456789" is 0x995dc9bbdf1939fa.
class Crc64 {
 public:
  void update(const void* data, std::size_t bytes);
  std::uint64_t value() const;
  /// 16 lowercase hex digits, as the manifest writes them.
  static std::string hex(std::uint64_t value);

 private:
  std::uint64_t m_remainder = ~std::uint64_t{0};
};

/// What a shard folder was packed from and with; a run's data config must agree.
struct ShardSettings {
  std::string data_type;  ///< the packed data.type: "videos", "images" or "synthetic"
  int image_size = 0;     ///< S: clips are S x S (short side resized to S, centre crop)
  int num_frames = 0;     ///< T: frames per clip (1 for images)
  int frame_stride = 1;   ///< every frame_stride-th source frame

  /// Bytes of one clip: T * S * S * 3.
  std::size_t clipBytes() const {
    return static_cast<std::size_t>(num_frames) * image_size * image_size * 3;
  }
  /// Source frames between the starts of consecutive clips of a video: T * frame_stride (clips
  /// do not overlap, and every clip's frames lie on one grid of frame_stride).
  int clipStep() const { return num_frames * frame_stride; }
};

/// The names shared by pack and the reader.
struct ShardFormat {
  static constexpr const char* kManifest = "manifest.json";
  static constexpr const char* kFormat = "tokenbench-clip-shards";      ///< manifest "format"
  static constexpr const char* kShardFormat = "tokenbench-clip-shard";  ///< shard metadata "format"
  static constexpr int kVersion = 1;
  static constexpr const char* kTensor = "clips";
  /// "shard_00042.safetensors"
  static std::string shardName(std::size_t index);
};

/// Start frames of the consecutive, non-overlapping clips of a video of `frames` frames: 0,
/// step, 2 step, ... while start + (T - 1) * frame_stride < frames. Empty when too short.
std::vector<int> clipStarts(int frames, const ShardSettings& settings);

/// One clip of a source: the shard that holds it, its row in that shard's tensor, and the
/// source frame it starts at.
struct ShardClip {
  std::uint32_t shard = 0;
  std::uint32_t row = 0;
  int frame_start = 0;
};

class ClipShards {
 public:
  /// Opens the shard folder `folder`; `key` ("data.path", "data.valid_path") names it in
  /// errors. Reads manifest.json and maps every shard it lists read-only. A shard whose size or
  /// header disagrees with the manifest, or whose header is not valid safetensors, is left out
  /// and named in index().skipped with the reason; with `verify_content`, so is one whose
  /// bytes do not match the manifest's crc64 (that reads every byte; without it only the
  /// headers are read). Throws UserError "data_path_missing" (no folder, no manifest),
  /// "data_config_invalid" (a manifest that cannot be read) or "dataset_empty" (no usable
  /// shard), each naming `key` and the folder.
  ClipShards(const std::filesystem::path& folder, const std::string& key,
             bool verify_content = false);
  ~ClipShards();
  ClipShards(const ClipShards&) = delete;
  ClipShards& operator=(const ClipShards&) = delete;

  const ShardSettings& settings() const { return m_settings; }

  /// The sources with at least one readable clip, in the order pack met them (sorted by path),
  /// as an index: path relative to the packed folder, and the source's frames, fps and size;
  /// `skipped` names the damaged shards (file name and reason). `root` is the shard folder.
  const DatasetIndex& index() const { return m_index; }

  /// Clips of source `source` (an index into index().files), in frame order.
  const std::vector<ShardClip>& clips(std::size_t source) const { return m_clips[source]; }

  /// The pixels of clip `k` of source `source`: uint8 RGB [T, S, S, 3], row-major, valid as
  /// long as this object lives. Reads from the map (the kernel pages it in); never copies.
  const std::uint8_t* pixels(std::size_t source, std::size_t k) const;

  std::int64_t shardCount() const { return static_cast<std::int64_t>(m_maps.size()); }
  std::int64_t usableShards() const;
  std::int64_t clipCount() const { return m_clip_count; }  ///< clips of the usable shards
  std::uint64_t bytes() const { return m_bytes; }          ///< bytes of the usable shards

 private:
  class Mapping;
  struct ManifestShard;
  /// Checks shard `i` against its manifest entry and adds its clips to m_clips (per source, by
  /// the index `source_of` gives a source path); returns the reason it is unusable, or "".
  std::string openShard(std::size_t i, const ManifestShard& shard, bool verify_content,
                        const std::map<std::string, std::size_t>& source_of);

  ShardSettings m_settings;
  DatasetIndex m_index;
  std::vector<std::vector<ShardClip>> m_clips;   ///< per source of m_index.files
  std::vector<std::unique_ptr<Mapping>> m_maps;  ///< per manifest shard; null when unusable
  std::vector<const std::uint8_t*> m_data;       ///< per shard: its clips tensor, or null
  std::int64_t m_clip_count = 0;
  std::uint64_t m_bytes = 0;
};

}  // namespace tb::trainer::data
