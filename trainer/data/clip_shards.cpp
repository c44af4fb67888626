#include "trainer/data/clip_shards.h"

#include "core/safetensors.h"
#include "trainer/user_error.h"

#include <boost/crc.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tb::trainer::data {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// CRC-64/XZ: width 64, polynomial 0x42f0e1eba9ea3693, init and final xor all ones, reflected.
using Crc64Engine = boost::crc_optimal<64, 0x42F0E1EBA9EA3693ULL, ~0ULL, ~0ULL, true, true>;

std::string metadataValue(const std::map<std::string, std::string>& meta, const std::string& key) {
  const auto it = meta.find(key);
  return it == meta.end() ? std::string("(missing)") : it->second;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

void Crc64::update(const void* data, std::size_t bytes) {
  Crc64Engine crc(m_remainder);
  crc.process_bytes(data, bytes);
  m_remainder = crc.get_interim_remainder();
}

std::uint64_t Crc64::value() const { return Crc64Engine(m_remainder).checksum(); }

std::string Crc64::hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string ShardFormat::shardName(std::size_t index) {
  char name[40];
  std::snprintf(name, sizeof name, "shard_%05zu.safetensors", index);
  return name;
}

std::vector<int> clipStarts(int frames, const ShardSettings& settings) {
  const int span =
      (settings.num_frames - 1) * settings.frame_stride + 1;  // source frames a clip covers
  std::vector<int> starts;
  for (int start = 0; start + span <= frames; start += settings.clipStep()) starts.push_back(start);
  return starts;
}

/// A whole file mapped read-only; the pages are read on first touch and may be dropped by the
/// kernel under memory pressure (they are clean), so a shard never has to fit in memory.
class ClipShards::Mapping {
 public:
  /// Opens `path`; maps it only when its size is `expected` (else size() says what it is).
  Mapping(const fs::path& path, std::uint64_t expected) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open: " + std::string(std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error("cannot stat: " + reason);
    }
    m_size = static_cast<std::uint64_t>(st.st_size);
    if (m_size == expected && m_size > 0) {
      void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        throw std::runtime_error("cannot map: " + reason);
      }
      m_data = static_cast<const char*>(p);
    }
    ::close(fd);  // the mapping keeps the file
  }
  ~Mapping() {
    if (m_data) ::munmap(const_cast<char*>(m_data), m_size);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;

  std::uint64_t size() const { return m_size; }
  std::string_view bytes() const { return {m_data, m_data ? m_size : 0}; }

 private:
  const char* m_data = nullptr;
  std::uint64_t m_size = 0;
};

/// One entry of the manifest's "shards".
struct ClipShards::ManifestShard {
  std::string file;  ///< a file name in the shard folder
  std::int64_t clips = 0;
  std::uint64_t bytes = 0;
  std::string crc64;
};

ClipShards::ClipShards(const fs::path& folder, const std::string& key, bool verify_content) {
  const std::string where = key + " \"" + folder.string() + "\"";
  const std::string pack_hint =
      "make a shard folder with tokenbench-trainer pack --config FILE --out DIR";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw UserError("data_path_missing", where + " is not a folder", pack_hint);
  const fs::path manifest_path = folder / ShardFormat::kManifest;
  std::ifstream in(manifest_path);
  if (!in) {
    throw UserError("data_path_missing",
                    where + " has no " + std::string(ShardFormat::kManifest) +
                        ": not a shard folder, or its pack did not finish",
                    pack_hint);
  }
  m_index.root = folder;
  std::map<std::string, std::size_t> source_of;
  std::vector<ManifestShard> shards;
  try {
    const Json manifest = Json::parse(in);
    if (manifest.value("format", "") != ShardFormat::kFormat) {
      throw std::runtime_error("format is not \"" + std::string(ShardFormat::kFormat) + "\"");
    }
    const int version = manifest.at("version").get<int>();
    if (version != ShardFormat::kVersion) {
      throw std::runtime_error("version " + std::to_string(version) +
                               ", this build reads version " +
                               std::to_string(ShardFormat::kVersion));
    }
    const Json& s = manifest.at("settings");
    m_settings.data_type = s.at("data_type").get<std::string>();
    m_settings.image_size = s.at("image_size").get<int>();
    m_settings.num_frames = s.at("num_frames").get<int>();
    m_settings.frame_stride = s.at("frame_stride").get<int>();
    if (m_settings.image_size < 1 || m_settings.num_frames < 1 || m_settings.frame_stride < 1) {
      throw std::runtime_error("settings image_size, num_frames and frame_stride must be >= 1");
    }
    for (const Json& source : manifest.at("sources")) {
      IndexedFile f;
      f.path = source.at("path").get<std::string>();
      f.frames = source.at("frames").get<int>();
      f.fps = source.value("fps", 0.0);
      f.width = source.at("width").get<int>();
      f.height = source.at("height").get<int>();
      source_of.emplace(f.path, m_index.files.size());
      m_index.files.push_back(std::move(f));
    }
    for (const Json& entry : manifest.at("shards")) {
      ManifestShard shard{
          entry.at("file").get<std::string>(), entry.at("clips").get<std::int64_t>(),
          entry.at("bytes").get<std::uint64_t>(), entry.at("crc64").get<std::string>()};
      // Shards live in the folder itself: a manifest cannot point the reader elsewhere.
      if (shard.file.empty() || fs::path(shard.file).filename() != shard.file) {
        throw std::runtime_error("shard file \"" + shard.file +
                                 "\" is not a file name in the folder");
      }
      shards.push_back(std::move(shard));
    }
  } catch (const std::exception& e) {
    throw UserError("data_config_invalid", manifest_path.string() + ": " + e.what(),
                    "pack the folder again with this build's tokenbench-trainer pack");
  }

  m_clips.assign(m_index.files.size(), {});
  m_maps.resize(shards.size());
  m_data.assign(shards.size(), nullptr);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string reason = openShard(i, shards[i], verify_content, source_of);
    if (!reason.empty()) m_index.skipped.push_back({shards[i].file, reason});
  }

  // Sources whose every clip lies in damaged shards leave the index (the shards are named).
  std::vector<IndexedFile> files;
  std::vector<std::vector<ShardClip>> clips;
  for (std::size_t s = 0; s < m_index.files.size(); ++s) {
    if (m_clips[s].empty()) continue;
    std::sort(m_clips[s].begin(), m_clips[s].end(),
              [](const ShardClip& a, const ShardClip& b) { return a.frame_start < b.frame_start; });
    files.push_back(std::move(m_index.files[s]));
    clips.push_back(std::move(m_clips[s]));
  }
  m_index.files = std::move(files);
  m_clips = std::move(clips);
  if (m_index.files.empty()) {
    const std::string why =
        m_index.skipped.empty()
            ? "the manifest lists no clips"
            : "all " + std::to_string(m_index.skipped.size()) +
                  " shards are unusable (first: " + m_index.skipped.front().path + ": " +
                  m_index.skipped.front().reason + ")";
    throw UserError("dataset_empty", where + ": " + why, "pack the folder again");
  }
}

ClipShards::~ClipShards() = default;

std::string ClipShards::openShard(std::size_t i, const ManifestShard& shard, bool verify_content,
                                  const std::map<std::string, std::size_t>& source_of) {
  const std::int64_t clips = shard.clips;
  const std::uint64_t bytes = shard.bytes;
  try {
    auto map = std::make_unique<Mapping>(m_index.root / shard.file, bytes);
    if (map->size() != bytes) {
      return (map->size() < bytes ? "truncated: " : "wrong size: ") + std::to_string(map->size()) +
             " bytes, " + "the manifest says " + std::to_string(bytes);
    }
    core::SafetensorsView view;
    try {
      view = core::SafetensorsView::parse(map->bytes());
    } catch (const core::SafetensorsError& e) {
      return std::string("damaged header: ") + e.what();
    }
    const core::TensorInfo* tensor = view.find(ShardFormat::kTensor);
    const std::vector<std::int64_t> expected{clips, m_settings.num_frames, m_settings.image_size,
                                             m_settings.image_size, 3};
    if (!tensor) return "no \"" + std::string(ShardFormat::kTensor) + "\" tensor";
    if (tensor->dtype != core::DType::U8 || tensor->shape != expected) {
      return "\"clips\" is " + std::string(core::dtypeName(tensor->dtype)) + " " +
             shapeText(tensor->shape) + ", the manifest says U8 " + shapeText(expected);
    }
    const auto& meta = view.metadata();
    for (const auto& [name, value] : {std::pair{"image_size", m_settings.image_size},
                                      {"num_frames", m_settings.num_frames},
                                      {"frame_stride", m_settings.frame_stride}}) {
      if (metadataValue(meta, name) != std::to_string(value)) {
        return std::string("metadata ") + name + " is " + metadataValue(meta, name) +
               ", the manifest says " + std::to_string(value);
      }
    }
    const Json list = Json::parse(metadataValue(meta, ShardFormat::kTensor), nullptr, false);
    if (!list.is_array() || static_cast<std::int64_t>(list.size()) != clips) {
      return "metadata \"clips\" does not list " + std::to_string(clips) + " clips";
    }
    std::vector<std::pair<std::size_t, ShardClip>> found;
    for (std::size_t row = 0; row < list.size(); ++row) {
      const Json& c = list[row];
      const auto source = c.is_object() && c.contains("source") && c["source"].is_string()
                              ? source_of.find(c["source"].get<std::string>())
                              : source_of.end();
      if (source == source_of.end() || !c.contains("frame_start") ||
          !c["frame_start"].is_number_integer()) {
        return "metadata \"clips\" entry " + std::to_string(row) +
               " names no source of the manifest";
      }
      found.push_back({source->second,
                       {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(row),
                        c["frame_start"].get<int>()}});
    }
    if (verify_content) {
      Crc64 crc;
      crc.update(map->bytes().data(), map->bytes().size());
      if (Crc64::hex(crc.value()) != shard.crc64) {
        return "content hash crc64 " + Crc64::hex(crc.value()) + ", the manifest says " +
               shard.crc64;
      }
    }
    for (const auto& [source, clip] : found) m_clips[source].push_back(clip);
    m_data[i] = reinterpret_cast<const std::uint8_t*>(view.data(*tensor).data());
    m_maps[i] = std::move(map);
    m_clip_count += clips;
    m_bytes += bytes;
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

const std::uint8_t* ClipShards::pixels(std::size_t source, std::size_t k) const {
  const ShardClip& clip = m_clips[source][k];
  const std::size_t bytes = m_settings.clipBytes();
  const std::uint8_t* first = m_data[clip.shard] + static_cast<std::size_t>(clip.row) * bytes;
  // Ask for the whole clip at once: one read-ahead instead of a page fault per 4 KiB (it
  // matters on network file systems). Advice only: failure changes nothing.
  static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(first) & ~(page - 1);
  ::madvise(reinterpret_cast<void*>(begin), reinterpret_cast<std::uintptr_t>(first) + bytes - begin,
            MADV_WILLNEED);
  return first;
}

std::int64_t ClipShards::usableShards() const {
  std::int64_t n = 0;
  for (const auto& m : m_maps) n += m != nullptr;
  return n;
}

}  // namespace tb::trainer::data
