#include "trainer/cli/pack_command.h"

#include "trainer/cli/model_commands.h"
#include "trainer/data/clip_loader.h"
#include "trainer/data/clip_shard_writer.h"
#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_error.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_decoder.h"
#endif
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

namespace tb::trainer::cli {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPrefix = "tokenbench-trainer pack: ";
// Clips decoded per piece of work: enough to amortise a seek, small enough that the pieces in
// flight (two per thread) stay far below a shard.
constexpr std::size_t kPieceBytes = std::size_t{16} << 20;

/// A run of consecutive clips of one source, decoded by one thread.
struct Piece {
  std::size_t source = 0;
  int frame_start = 0;
  std::size_t clips = 0;
};

struct Decoded {
  std::vector<std::uint8_t> pixels;  ///< [clips, T, S, S, 3]
  std::string error;                 ///< non-empty: the piece could not be decoded
};

/// What pack reads: the sources (indexed as training would) and their pieces, in order.
struct PackPlan {
  std::vector<data::IndexedFile> sources;
  std::vector<data::SkippedFile> skipped;
  std::vector<Piece> pieces;
  /// pieces of source s: [first_piece[s], first_piece[s + 1])
  std::vector<std::size_t> first_piece;
};

PackPlan planPack(const core::DataConfig& d, const data::ShardSettings& settings, int threads) {
  PackPlan plan;
  if (d.type == core::DataType::Synthetic) {
    for (int i = 0; i < d.synthetic_clips; ++i) {
      plan.sources.push_back(
          {"synthetic:" + std::to_string(i), d.num_frames, 0.0, d.image_size, d.image_size});
    }
  } else {
    data::IndexOptions options;
    options.kind =
        d.type == core::DataType::Videos ? media::MediaKind::Video : media::MediaKind::Image;
    options.min_frames = (d.num_frames - 1) * d.frame_stride + 1;
    options.threads = threads;
    data::DatasetIndex index = data::buildDatasetIndex(d.path, options);
    plan.sources = std::move(index.files);
    plan.skipped = std::move(index.skipped);
  }
  const std::size_t per_piece = std::max<std::size_t>(1, kPieceBytes / settings.clipBytes());
  for (std::size_t s = 0; s < plan.sources.size(); ++s) {
    plan.first_piece.push_back(plan.pieces.size());
    const std::vector<int> starts = d.type == core::DataType::Videos
                                        ? data::clipStarts(plan.sources[s].frames, settings)
                                        : std::vector<int>{0};
    for (std::size_t i = 0; i < starts.size(); i += per_piece) {
      plan.pieces.push_back({s, starts[i], std::min(per_piece, starts.size() - i)});
    }
  }
  plan.first_piece.push_back(plan.pieces.size());
  return plan;
}

/// Decodes the pieces of one source, in order, handing each to `deliver`; stops at the first
/// failure (delivered in place of the piece that failed, with its error).
template <class Deliver>
void decodeSource(const core::DataConfig& d, const fs::path& path,
                  const data::SyntheticClips* synthetic, std::size_t source,
                  [[maybe_unused]] const std::vector<Piece>& pieces, std::size_t first,
                  [[maybe_unused]] std::size_t last, Deliver&& deliver) {
  auto bytesOf = [](const torch::Tensor& clip) { return media::tensorToFrames(clip).rgb; };
  std::size_t current = first;  // the piece a failure is delivered in place of
  try {
    if (synthetic) {
      deliver(first, Decoded{bytesOf(synthetic->clip(static_cast<std::int64_t>(source))), {}});
      return;
    }
    if (d.type == core::DataType::Images) {
#if TB_WITH_OPENCV
      const torch::Tensor clip = data::resizeAndCrop(
          media::framesToTensor(media::ImageReader::read(path.string())), d.image_size);
      deliver(first, Decoded{bytesOf(clip), {}});
      return;
#else
      throw media::MediaError(path.string(), "this build has no OpenCV");
#endif
    }
#if TB_WITH_FFMPEG
    media::VideoDecoder decoder(path.string());
    for (; current < last; ++current) {
      media::ClipRequest request;
      request.start = pieces[current].frame_start;
      request.count = static_cast<int>(pieces[current].clips) * d.num_frames;  // clips back to back
      request.stride = d.frame_stride;
      request.resizeShortSide = d.image_size;
      request.cropSize = d.image_size;
      if (!deliver(current, Decoded{decoder.decode(request).rgb, {}})) return;
    }
#else
    throw media::MediaError(path.string(), "this build has no FFmpeg");
#endif
  } catch (const media::MediaError& e) {
    deliver(current, Decoded{{}, e.reason()});
  } catch (const std::exception& e) {
    deliver(current, Decoded{{}, e.what()});
  }
}

/// Pieces decoded by worker threads, consumed in order; at most `window` pieces ahead of the
/// consumer are held, so memory stays bounded whatever the dataset's size.
class PieceQueue {
 public:
  explicit PieceQueue(std::size_t window) : m_window(window) {}

  /// Waits until piece `p` may be held, then stores it; false when the consumer has stopped.
  bool put(std::size_t p, Decoded decoded) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_stop || p < m_next + m_window; });
    if (m_stop) return false;
    m_ready.emplace(p, std::move(decoded));
    m_cv.notify_all();
    return true;
  }
  /// Piece `p`, or the failure delivered in place of a source's first unfinished piece <= p.
  Decoded take(std::size_t p) {
    std::unique_lock<std::mutex> lock(m_mutex);
    m_cv.wait(lock, [&] { return m_ready.count(p) > 0; });
    Decoded out = std::move(m_ready[p]);
    m_ready.erase(p);
    m_next = p + 1;
    m_cv.notify_all();
    return out;
  }
  /// Skips to `p` (the rest of a failed source), dropping anything held before it.
  void advance(std::size_t p) {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_ready.erase(m_ready.begin(), m_ready.lower_bound(p));
    m_next = p;
    m_cv.notify_all();
  }
  void stop() {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_stop = true;
    m_cv.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::size_t m_window;
  std::size_t m_next = 0;
  bool m_stop = false;
  std::map<std::size_t, Decoded> m_ready;
};

/// What decodeIntoShards did.
struct PackCounts {
  std::int64_t clips = 0;      ///< clips appended
  std::int64_t failed = 0;     ///< sources that gave no clip
  std::int64_t cut_short = 0;  ///< sources that failed after some clips
};

/// Decodes every piece of `plan` on `threads` threads (a thread takes a whole source, so each
/// file is opened once) and appends the clips to `writer` in plan order. A source that fails
/// keeps the clips before the failure; it is named on stderr and in the writer's skipped list.
PackCounts decodeIntoShards(const core::DataConfig& d, const PackPlan& plan,
                            const data::SyntheticClips* synthetic, int threads,
                            data::ClipShardWriter& writer) {
  PackCounts counts;
  const std::size_t clip_bytes =
      data::ShardSettings{core::choiceName(d.type), d.image_size, d.num_frames, d.frame_stride}
          .clipBytes();
  PieceQueue queue(2 * static_cast<std::size_t>(threads));
  std::atomic<std::size_t> next_source{0};
  auto work = [&] {
    for (std::size_t s; (s = next_source.fetch_add(1)) < plan.sources.size();) {
      const fs::path path = fs::path(d.path) / plan.sources[s].path;
      bool open = true;
      decodeSource(
          d, path, synthetic, s, plan.pieces, plan.first_piece[s], plan.first_piece[s + 1],
          [&](std::size_t p, Decoded decoded) { return open = queue.put(p, std::move(decoded)); });
      if (!open) return;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  try {
    for (std::size_t p = 0; p < plan.pieces.size(); ++p) {
      Decoded decoded = queue.take(p);
      const Piece& piece = plan.pieces[p];
      const data::IndexedFile& source = plan.sources[piece.source];
      if (decoded.error.empty() && decoded.pixels.size() != piece.clips * clip_bytes) {
        decoded.error = "decoded " + std::to_string(decoded.pixels.size()) + " bytes for " +
                        std::to_string(piece.clips) + " clips of " + std::to_string(clip_bytes);
      }
      if (decoded.error.empty()) {
        writer.append(source, piece.frame_start, decoded.pixels.data(), piece.clips);
        counts.clips += static_cast<std::int64_t>(piece.clips);
        continue;
      }
      // The clips before the failure are kept; the rest of the file is left out, and said so.
      std::string reason = decoded.error;
      if (p > plan.first_piece[piece.source]) {
        reason += " (clips from frame " + std::to_string(piece.frame_start) + " on left out)";
        ++counts.cut_short;
      } else {
        ++counts.failed;
      }
      std::cerr << kPrefix << "skipping " << (fs::path(d.path) / source.path).string() << ": "
                << reason << "\n";
      writer.skip({source.path, reason});
      const std::size_t next_file = plan.first_piece[piece.source + 1];
      queue.advance(next_file);
      p = next_file - 1;  // the loop's ++p moves to the next file's first piece
    }
  } catch (...) {
    queue.stop();
    for (auto& t : pool) t.join();
    throw;
  }
  for (auto& t : pool) t.join();
  return counts;
}

std::string buildLacks(core::DataType type) {
#if !TB_WITH_FFMPEG
  if (type == core::DataType::Videos)
    return "data.type \"videos\" needs FFmpeg, and this build has none (TB_WITH_FFMPEG=OFF)";
#endif
#if !TB_WITH_OPENCV
  if (type == core::DataType::Images)
    return "data.type \"images\" needs OpenCV, and this build has none (TB_WITH_OPENCV=OFF)";
#endif
  (void)type;
  return "";
}

}  // namespace

int pack(const PackArgs& args) {
  const auto started = std::chrono::steady_clock::now();
  core::RunConfig config;
  if (!loadConfigArgument(args.config, args.preset, config)) return 2;
  const core::DataConfig& d = config.data;
  auto usage = [](const std::string& message) {
    std::cerr << kPrefix << message << "\n";
    return 2;
  };
  if (d.type == core::DataType::Shards) {
    return usage(
        "data.type is \"shards\": that data is packed already (pack reads videos, images or "
        "synthetic)");
  }
  if (const std::string lacks = buildLacks(d.type); !lacks.empty()) {
    return usage(lacks +
                 ": pack on a machine whose tokenbench-trainer has it, and copy the shard folder; "
                 "training from shards needs neither FFmpeg nor OpenCV");
  }
  if (d.type != core::DataType::Synthetic) {
    std::error_code ec;
    if (d.path.empty())
      return usage(std::string("data.path is empty: data.type \"") + core::choiceName(d.type) +
                   "\" needs a folder");
    if (!fs::is_directory(d.path, ec)) return usage("data.path \"" + d.path + "\" is not a folder");
  }
  if (!(args.shard_mb > 0)) return usage("--shard-mb must be > 0");
  const fs::path out(args.out);
  std::error_code ec;
  if (fs::exists(out, ec) && !(fs::is_directory(out, ec) && fs::is_empty(out, ec))) {
    return usage(out.string() +
                 " is not an empty folder: pack writes a new shard folder (remove it, or choose "
                 "another --out)");
  }

  const data::ShardSettings settings{core::choiceName(d.type), d.image_size, d.num_frames,
                                     d.frame_stride};
  const int threads = std::max(1, args.threads > 0 ? args.threads : d.workers);
  PackPlan plan;
  try {
    plan = planPack(d, settings, threads);
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  for (const auto& s : plan.skipped)
    std::cerr << kPrefix << "skipping " << (fs::path(d.path) / s.path).string() << ": " << s.reason
              << "\n";
  if (plan.pieces.empty()) {
    return usage("data.path \"" + d.path + "\": no usable " + core::choiceName(d.type) + " (" +
                 std::to_string(plan.skipped.size()) + " files skipped)");
  }

  std::unique_ptr<data::SyntheticClips> synthetic;
  if (d.type == core::DataType::Synthetic) {
    synthetic =
        std::make_unique<data::SyntheticClips>(d.synthetic_clips, d.num_frames, d.image_size,
                                               static_cast<std::uint64_t>(config.train.seed));
  }
  data::PackTotals totals;
  PackCounts counts;
  try {
    fs::create_directories(out);
    data::ClipShardWriter writer(out, settings,
                                 static_cast<std::uint64_t>(args.shard_mb * 1024 * 1024));
    for (auto& s : plan.skipped) writer.skip(s);
    counts = decodeIntoShards(d, plan, synthetic.get(), threads, writer);
    if (counts.clips == 0) return usage("data.path \"" + d.path + "\": no file could be decoded");
    totals = writer.finish(d.type == core::DataType::Synthetic ? "synthetic" : d.path);
  } catch (const std::exception& e) {
    std::cerr << kPrefix << e.what() << "\n";
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::int64_t skipped = static_cast<std::int64_t>(plan.skipped.size()) + counts.failed;
  nlohmann::ordered_json summary = {
      {"out", out.string()},     {"shards", totals.shards},
      {"clips", totals.clips},   {"sources", totals.sources},
      {"frames", totals.frames}, {"bytes", totals.bytes},
      {"skipped", skipped},      {"content_hash", totals.content_hash},
      {"seconds", seconds},      {"clips_per_s", static_cast<double>(totals.clips) / seconds}};
  std::cout << summary.dump() << std::endl;
  std::cerr << kPrefix << totals.clips << " clips of " << totals.sources << " sources in "
            << totals.shards << " shards (" << totals.bytes / (1024 * 1024) << " MiB) into "
            << out.string();
  if (skipped + counts.cut_short > 0)
    std::cerr << "; " << skipped << " files skipped, " << counts.cut_short << " cut short";
  std::cerr << "\n";
  return 0;
}

}  // namespace tb::trainer::cli
