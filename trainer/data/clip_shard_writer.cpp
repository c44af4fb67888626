#include "trainer/data/clip_shard_writer.h"

#include "core/atomic_file.h"
#include "core/safetensors.h"
#include "core/version.h"
#include "trainer/media/media_error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace tb::trainer::data {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

ClipShardWriter::ClipShardWriter(std::filesystem::path folder, ShardSettings settings,
                                 std::uint64_t shard_bytes)
    : m_folder(std::move(folder)),
      m_settings(std::move(settings)),
      m_clips_per_shard(std::max<std::size_t>(
          1, static_cast<std::size_t>(shard_bytes / m_settings.clipBytes()))) {}

void ClipShardWriter::append(const IndexedFile& source, int frame_start, const std::uint8_t* pixels,
                             std::size_t count) {
  if (m_sources.empty() || m_sources.back().file.path != source.path)
    m_sources.push_back({source, 0});
  const std::size_t clip_bytes = m_settings.clipBytes();
  for (std::size_t i = 0; i < count; ++i) {
    // Reserved whole: pages not yet written cost no memory, and the buffer never moves.
    if (m_pending == 0) m_pixels.reserve(m_clips_per_shard * clip_bytes);
    const auto* first = reinterpret_cast<const char*>(pixels + i * clip_bytes);
    m_pixels.insert(m_pixels.end(), first, first + clip_bytes);
    const Json entry = {{"source", source.path},
                        {"frame_start", frame_start + static_cast<int>(i) * m_settings.clipStep()},
                        {"frame_stride", m_settings.frame_stride},
                        {"frame_count", m_settings.num_frames}};
    m_clip_list += (m_pending ? "," : "") + entry.dump();
    ++m_pending;
    ++m_sources.back().clips;
    if (m_pending == m_clips_per_shard) writeShard();
  }
}

void ClipShardWriter::skip(SkippedFile file) { m_skipped.push_back(std::move(file)); }

void ClipShardWriter::writeShard() {
  if (m_pending == 0) return;
  const std::int64_t n = static_cast<std::int64_t>(m_pending);
  core::SafetensorsWriter writer;
  writer.add(ShardFormat::kTensor, core::DType::U8,
             {n, m_settings.num_frames, m_settings.image_size, m_settings.image_size, 3},
             std::move(m_pixels));
  writer.setMetadata("format", ShardFormat::kShardFormat);
  writer.setMetadata("version", std::to_string(ShardFormat::kVersion));
  writer.setMetadata("data_type", m_settings.data_type);
  writer.setMetadata("image_size", std::to_string(m_settings.image_size));
  writer.setMetadata("num_frames", std::to_string(m_settings.num_frames));
  writer.setMetadata("frame_stride", std::to_string(m_settings.frame_stride));
  writer.setMetadata(ShardFormat::kTensor, "[" + m_clip_list + "]");
  const std::string name = ShardFormat::shardName(m_shards.size());
  const std::filesystem::path path = m_folder / name;
  writer.writeFile(path);
  m_pixels = {};
  m_clip_list.clear();
  m_pending = 0;

  // The hashes are of the bytes on disk, read back (from the page cache, just written).
  Crc64 crc;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buffer(std::size_t{4} << 20);
  std::uint64_t bytes = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    crc.update(buffer.data(), got);
    m_content.update(buffer.data(), got);
    bytes += got;
  }
  if (!in.eof()) throw media::MediaError(path.string(), "cannot read the shard back to hash it");
  m_shards.push_back({name, n, bytes, Crc64::hex(crc.value())});
  m_totals.shards += 1;
  m_totals.clips += n;
  m_totals.frames += n * m_settings.num_frames;
  m_totals.bytes += bytes;
}

PackTotals ClipShardWriter::finish(const std::string& packed_from) {
  writeShard();
  m_totals.sources = static_cast<std::int64_t>(m_sources.size());
  m_totals.content_hash = "crc64:" + Crc64::hex(m_content.value());
  Json shards = Json::array(), sources = Json::array(), skipped = Json::array();
  for (const Shard& s : m_shards) {
    shards.push_back(
        {{"file", s.file}, {"clips", s.clips}, {"bytes", s.bytes}, {"crc64", s.crc64}});
  }
  for (const Source& s : m_sources) {
    sources.push_back({{"path", s.file.path},
                       {"frames", s.file.frames},
                       {"fps", s.file.fps},
                       {"width", s.file.width},
                       {"height", s.file.height},
                       {"clips", s.clips}});
  }
  for (const SkippedFile& s : m_skipped)
    skipped.push_back({{"path", s.path}, {"reason", s.reason}});
  const Json manifest = {{"format", ShardFormat::kFormat},
                         {"version", ShardFormat::kVersion},
                         {"tokenbench_version", core::versionString()},
                         {"packed_from", packed_from},
                         {"settings",
                          {{"data_type", m_settings.data_type},
                           {"image_size", m_settings.image_size},
                           {"num_frames", m_settings.num_frames},
                           {"frame_stride", m_settings.frame_stride}}},
                         {"totals",
                          {{"shards", m_totals.shards},
                           {"clips", m_totals.clips},
                           {"sources", m_totals.sources},
                           {"frames", m_totals.frames},
                           {"bytes", m_totals.bytes}}},
                         {"content_hash", m_totals.content_hash},
                         {"shards", shards},
                         {"sources", sources},
                         {"skipped", skipped}};
  core::writeFileAtomically(m_folder / ShardFormat::kManifest, manifest.dump(1) + "\n");
  return m_totals;
}

}  // namespace tb::trainer::data
