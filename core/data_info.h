#pragma once
// The data-info document: what `tokenbench-trainer data-info` prints (stdout, one JSON line)
// and the Setup page's Dataset panel shows. Both sides use this struct and its JSON, tested
// against tests/golden/data_info_v1.json. Keys: "version", then those of DataInfo::describe in
// its order ("valid_path" only when set, "shards" and "valid_shards" only for data.type shards).
//
// Readers accept a document without "version" (trainers before it) and refuse another version.

#include "core/document_field.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// Version of the data-info document this build writes and reads.
inline constexpr int kDataInfoVersion = 1;

/// A set of clip shards (data.type "shards"), as `pack` wrote them.
struct ShardSetInfo {
  std::string data_type;  ///< what was packed: "videos" or "images"
  int image_size = 0;     ///< pixels, square
  int num_frames = 0;     ///< frames per clip
  int frame_stride = 0;
  std::int64_t count = 0;   ///< shard files
  std::int64_t usable = 0;  ///< shards whose settings match the configuration
  std::int64_t clips = 0;
  std::int64_t bytes = 0;
  bool verified = false;  ///< checksums were checked (data-info --verify)

  template <class V>
  void describe(V& v) {
    v.field("data_type", data_type);
    v.field("image_size", image_size);
    v.field("num_frames", num_frames);
    v.field("frame_stride", frame_stride);
    v.field("count", count);
    v.field("usable", usable);
    v.field("clips", clips);
    v.field("bytes", bytes);
    v.field("verified", verified);
  }
};

struct DataInfo {
  std::string type;        ///< data.type
  std::string path;        ///< data.path ("" for procedural clips)
  std::string valid_path;  ///< data.valid_path; "" when validation is split off data.path
  std::int64_t files = 0;
  std::int64_t train_files = 0;
  std::int64_t valid_files = 0;
  std::int64_t train_clips = 0;  ///< clips training draws from
  std::int64_t valid_clips = 0;  ///< held-out clips (one per held-out file)
  std::int64_t min_frames = 0;   ///< frames of the shortest file
  std::int64_t max_frames = 0;
  std::int64_t total_frames = 0;
  struct Resolution {
    int width = 0;
    int height = 0;
    std::int64_t files = 0;

    template <class V>
    void describe(V& v) {
      v.field("width", width);
      v.field("height", height);
      v.field("files", files);
    }
  };
  std::vector<Resolution> resolutions;  ///< ascending by (width, height)
  struct Skipped {
    std::string path;
    std::string reason;  ///< e.g. "no video stream"

    template <class V>
    void describe(V& v) {
      v.field("path", path);
      v.field("reason", reason);
    }
  };
  std::vector<Skipped> skipped;              ///< files the index could not use
  std::optional<ShardSetInfo> shards;        ///< training shards (data.type shards)
  std::optional<ShardSetInfo> valid_shards;  ///< shards of data.valid_path, when set
  struct Preview {
    std::string source;  ///< the file the clip comes from
    std::string png;     ///< absolute path of its strip of frames

    template <class V>
    void describe(V& v) {
      v.field("source", source);
      v.field("png", png);
    }
  };
  std::vector<Preview> preview;  ///< with --preview

  /// The document's keys after "version", in order.
  template <class V>
  void describe(V& v) {
    v.field("type", type);
    v.field("path", path);
    v.field("valid_path", valid_path, DocField().omitUnset());
    v.field("files", files);
    v.field("train_files", train_files);
    v.field("valid_files", valid_files);
    v.field("train_clips", train_clips);
    v.field("valid_clips", valid_clips);
    v.object("frames", [&](auto& frames) {
      frames.field("min", min_frames);
      frames.field("max", max_frames);
      frames.field("total", total_frames);
    });
    v.field("resolutions", resolutions);
    v.field("skipped", skipped);
    v.field("shards", shards);
    v.field("valid_shards", valid_shards);
    // A document printed without --preview by an older trainer may lack the key.
    v.field("preview", preview, DocField().optional());
  }
};

/// The document, keys in the documented order, "version" first.
nlohmann::ordered_json toJson(const DataInfo& info);

/// Reads a document (JSON text). Returns nullopt, with the reason in `error` when given (e.g.
/// `data-info: missing "frames"`), for anything else. Never throws.
std::optional<DataInfo> parseDataInfo(std::string_view text, std::string* error = nullptr);

}  // namespace tb::core
