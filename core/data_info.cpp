#include "core/data_info.h"

#include "core/detail/document_fields.h"

namespace tb::core {
namespace {

using detail::Json;

Json toJson(const ShardSetInfo& s) {
  return {{"data_type", s.data_type},   {"image_size", s.image_size},
          {"num_frames", s.num_frames}, {"frame_stride", s.frame_stride},
          {"count", s.count},           {"usable", s.usable},
          {"clips", s.clips},           {"bytes", s.bytes},
          {"verified", s.verified}};
}

std::optional<ShardSetInfo> readShards(const Json& doc, const char* key) {
  if (doc.find(key) == doc.end()) return std::nullopt;
  const Json& j = detail::documentField(doc, key, &Json::is_object, "an object");
  ShardSetInfo s;
  s.data_type = detail::documentString(j, "data_type");
  s.image_size = static_cast<int>(detail::documentInteger(j, "image_size"));
  s.num_frames = static_cast<int>(detail::documentInteger(j, "num_frames"));
  s.frame_stride = static_cast<int>(detail::documentInteger(j, "frame_stride"));
  s.count = detail::documentInteger(j, "count");
  s.usable = detail::documentInteger(j, "usable");
  s.clips = detail::documentInteger(j, "clips");
  s.bytes = detail::documentInteger(j, "bytes");
  s.verified = detail::documentField(j, "verified", &Json::is_boolean, "true or false").get<bool>();
  return s;
}

const Json& objectsOf(const Json& doc, const char* key) {
  const Json& array = detail::documentField(doc, key, &Json::is_array, "an array");
  for (const Json& item : array) {
    if (!item.is_object())
      throw std::runtime_error(std::string("\"") + key + "\" holds a non-object");
  }
  return array;
}

}  // namespace

Json toJson(const DataInfo& info) {
  Json j;
  j["version"] = kDataInfoVersion;
  j["type"] = info.type;
  j["path"] = info.path;
  if (!info.valid_path.empty()) j["valid_path"] = info.valid_path;
  j["files"] = info.files;
  j["train_files"] = info.train_files;
  j["valid_files"] = info.valid_files;
  j["train_clips"] = info.train_clips;
  j["valid_clips"] = info.valid_clips;
  j["frames"] = {{"min", info.min_frames}, {"max", info.max_frames}, {"total", info.total_frames}};
  Json resolutions = Json::array();
  for (const auto& r : info.resolutions) {
    resolutions.push_back({{"width", r.width}, {"height", r.height}, {"files", r.files}});
  }
  j["resolutions"] = resolutions;
  Json skipped = Json::array();
  for (const auto& s : info.skipped) skipped.push_back({{"path", s.path}, {"reason", s.reason}});
  j["skipped"] = skipped;
  if (info.shards) j["shards"] = toJson(*info.shards);
  if (info.valid_shards) j["valid_shards"] = toJson(*info.valid_shards);
  Json preview = Json::array();
  for (const auto& p : info.preview) preview.push_back({{"source", p.source}, {"png", p.png}});
  j["preview"] = preview;
  return j;
}

std::optional<DataInfo> parseDataInfo(std::string_view text, std::string* error) {
  try {
    const Json doc = detail::readDocumentObject(text, kDataInfoVersion);
    DataInfo info;
    info.type = detail::documentString(doc, "type");
    info.path = detail::documentString(doc, "path");
    if (doc.find("valid_path") != doc.end())
      info.valid_path = detail::documentString(doc, "valid_path");
    info.files = detail::documentInteger(doc, "files");
    info.train_files = detail::documentInteger(doc, "train_files");
    info.valid_files = detail::documentInteger(doc, "valid_files");
    info.train_clips = detail::documentInteger(doc, "train_clips");
    info.valid_clips = detail::documentInteger(doc, "valid_clips");
    const Json& frames = detail::documentField(doc, "frames", &Json::is_object, "an object");
    info.min_frames = detail::documentInteger(frames, "min");
    info.max_frames = detail::documentInteger(frames, "max");
    info.total_frames = detail::documentInteger(frames, "total");
    for (const Json& r : objectsOf(doc, "resolutions")) {
      info.resolutions.push_back({static_cast<int>(detail::documentInteger(r, "width")),
                                  static_cast<int>(detail::documentInteger(r, "height")),
                                  detail::documentInteger(r, "files")});
    }
    for (const Json& s : objectsOf(doc, "skipped")) {
      info.skipped.push_back(
          {detail::documentString(s, "path"), detail::documentString(s, "reason")});
    }
    info.shards = readShards(doc, "shards");
    info.valid_shards = readShards(doc, "valid_shards");
    // A document printed without --preview by an older trainer may lack the key.
    if (doc.find("preview") != doc.end()) {
      for (const Json& p : objectsOf(doc, "preview")) {
        info.preview.push_back(
            {detail::documentString(p, "source"), detail::documentString(p, "png")});
      }
    }
    return info;
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string("data-info: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace tb::core
