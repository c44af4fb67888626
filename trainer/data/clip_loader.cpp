#include "trainer/data/clip_loader.h"

#include "core/media_files.h"

#include "trainer/media/frame_tensors.h"
#include "trainer/media/media_error.h"
#include "trainer/torch_compat.h"
#if TB_WITH_FFMPEG
#include "trainer/media/video_decoder.h"
#endif
#if TB_WITH_OPENCV
#include "trainer/media/image_reader.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

namespace tb::trainer::data {
namespace {

namespace F = torch::nn::functional;

// SplitMix64: independent, well-mixed draws from (seed, position).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Picture size after scaling the short side to `size` (aspect kept), the same rounding as the
// video decoder's scaler, so crop offsets computed here are valid there.
std::pair<std::int64_t, std::int64_t> resizedShape(std::int64_t h, std::int64_t w,
                                                   std::int64_t size) {
  if (w <= h)
    return {std::max<std::int64_t>(size, std::llround(static_cast<double>(h) * size / w)), size};
  return {size, std::max<std::int64_t>(size, std::llround(static_cast<double>(w) * size / h))};
}

std::string kindName(core::DataType type) {
  if (type == core::DataType::Shards) return "clip shards (written by tokenbench-trainer pack)";
  return type == core::DataType::Videos ? "videos" : "images";
}

}  // namespace

torch::Tensor resizeAndCrop(const torch::Tensor& clip, std::int64_t size, std::int64_t top,
                            std::int64_t left, std::int64_t crop) {
  const std::int64_t h = clip.size(2), w = clip.size(3);
  torch::Tensor x = clip;
  if (std::min(h, w) != size) {
    const auto [nh, nw] = resizedShape(h, w, size);
    x = F::interpolate(clip.permute({1, 0, 2, 3}),  // frames as the batch
                       F::InterpolateFuncOptions()
                           .size(std::vector<std::int64_t>{nh, nw})
                           .mode(torch::kBicubic)
                           .align_corners(false)
                           .antialias(nh < h))
            .permute({1, 0, 2, 3})
            .clamp(-1, 1);
  }
  if (crop < 0) crop = size;
  if (top < 0) top = (x.size(2) - crop) / 2;
  if (left < 0) left = (x.size(3) - crop) / 2;
  TORCH_CHECK(top + crop <= x.size(2) && left + crop <= x.size(3),
              "resizeAndCrop: crop outside the picture");
  return x.slice(2, top, top + crop).slice(3, left, left + crop).contiguous();
}

ClipDataset::ClipDataset(const core::DataConfig& data, std::uint64_t seed,
                         const std::filesystem::path& index_cache, int probe_threads,
                         bool verify_shards)
    : m_data(data), m_seed(seed), m_verify_shards(verify_shards) {
  if (data.type == core::DataType::Synthetic) {
    m_synthetic = std::make_unique<SyntheticClips>(data.synthetic_clips, data.num_frames,
                                                   data.image_size, seed);
    const std::int64_t n = data.synthetic_clips;
    const std::int64_t n_valid =
        data.valid_fraction > 0
            ? std::clamp<std::int64_t>(std::llround(n * data.valid_fraction), 1, n - 1)
            : 0;
    for (std::int64_t i = 0; i < n; ++i) (i < n - n_valid ? m_train : m_valid).push_back(i);
    return;
  }
  if (data.path.empty()) {
    throw DataError("data_config_invalid",
                    std::string("data.path is empty: data.type \"") + core::choiceName(data.type) +
                        "\" needs a folder",
                    "set data.path to the folder of " + kindName(data.type));
  }
  if (data.type == core::DataType::Images && data.num_frames != 1) {
    throw DataError("data_config_invalid",
                    "data.num_frames is " + std::to_string(data.num_frames) +
                        " but data.type \"images\" gives 1-frame clips",
                    "set data.num_frames to 1");
  }
#if TB_WITH_FFMPEG
  // Damaged files are reported once each, by name, as warnings; FFmpeg's own per-packet
  // complaints about them would bury the log.
  if (data.type == core::DataType::Videos) media::setFfmpegLogQuiet(true);
#endif
  m_index = indexFolder("data.path", data.path, index_cache, probe_threads);
  if (data.valid_path.empty()) {
    std::tie(m_train, m_valid) =
        splitFiles(static_cast<std::int64_t>(m_index.files.size()), data.valid_fraction, seed);
    return;
  }
  // Validation from a folder of its own: every file of data.path trains.
  const std::filesystem::path valid_cache =
      index_cache.empty()
          ? index_cache
          : index_cache.parent_path() / ("valid_" + index_cache.filename().string());
  m_valid_index = indexFolder("data.valid_path", data.valid_path, valid_cache, probe_threads);
  m_train.resize(m_index.files.size());
  std::iota(m_train.begin(), m_train.end(), 0);
  m_valid.resize(m_valid_index.files.size());
  std::iota(m_valid.begin(), m_valid.end(), 0);
}

DatasetIndex ClipDataset::indexFolder(const std::string& key, const std::string& folder,
                                      const std::filesystem::path& cache, int probe_threads) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    throw DataError("data_path_missing", key + " \"" + folder + "\" is not a folder",
                    "point " + key + " at a folder of " + kindName(m_data.type));
  }
  DatasetIndex index;
  if (m_data.type == core::DataType::Shards) {
    index = openShards(key, folder);
  } else {
    IndexOptions options;
    options.kind =
        m_data.type == core::DataType::Videos ? media::MediaKind::Video : media::MediaKind::Image;
    options.min_frames = (m_data.num_frames - 1) * m_data.frame_stride + 1;
    options.threads = probe_threads;
    options.cache_file = cache;
    index = buildDatasetIndex(folder, options);
  }
  // Skips are named relative to data.path; those of another folder by their full path.
  for (SkippedFile s : index.skipped) {
    if (folder != m_data.path) s.path = (std::filesystem::path(folder) / s.path).string();
    m_index_skips.push_back(std::move(s));
  }
  if (index.files.empty()) {
    const bool videos = m_data.type == core::DataType::Videos;
    std::string why =
        "all " + std::to_string(index.skipped.size()) + " files are unusable (first: " +
        (index.skipped.empty() ? std::string()
                               : index.skipped.front().path + ": " + index.skipped.front().reason) +
        ")";
    std::string hint = "check the folder, data.type and data.num_frames x data.frame_stride";
    if (index.skipped.empty()) {
      // A folder of the other kind: say so, and what to set.
      const core::MediaFileCount found = core::countMediaFiles(folder);
      const std::int64_t others = videos ? found.images : found.videos;
      why = std::string("no ") + (videos ? "video" : "image") + " files found";
      if (others > 0) {
        why += ", but " + std::to_string(others) + (videos ? " image" : " video") +
               (others == 1 ? " file" : " files");
        hint = std::string("set data.type to ") + (videos ? "images" : "videos");
      }
    }
    throw DataError("dataset_empty", key + " \"" + folder + "\": " + why, hint);
  }
  return index;
}

DatasetIndex ClipDataset::openShards(const std::string& key, const std::string& folder) {
  auto shards = std::make_unique<ClipShards>(folder, key, m_verify_shards);
  const ShardSettings& packed = shards->settings();
  for (const auto& [name, wanted, have] :
       {std::tuple{"data.image_size", m_data.image_size, packed.image_size},
        {"data.num_frames", m_data.num_frames, packed.num_frames},
        {"data.frame_stride", m_data.frame_stride, packed.frame_stride}}) {
    if (wanted != have) {
      throw DataError("data_config_invalid",
                      std::string(name) + " is " + std::to_string(wanted) + " but the shards in " +
                          key + " \"" + folder + "\" were packed with " + std::to_string(have),
                      "set " + std::string(name) + " to " + std::to_string(have) +
                          ", or pack the data again with " + std::to_string(wanted));
    }
  }
  DatasetIndex index = shards->index();
  (key == "data.valid_path" ? m_valid_shards : m_shards) = std::move(shards);
  return index;
}

const DatasetIndex& ClipDataset::indexOf(bool train) const {
  return train || m_data.valid_path.empty() ? m_index : m_valid_index;
}

std::int64_t ClipDataset::itemAt(std::int64_t position) {
  const std::int64_t n = trainSize();
  const std::int64_t epoch = position / n;
  std::lock_guard<std::mutex> guard(m_mutex);
  if (epoch != m_epoch) {
    m_perm.resize(static_cast<std::size_t>(n));
    std::iota(m_perm.begin(), m_perm.end(), 0);
    std::mt19937_64 rng(m_seed * 1000003ULL + static_cast<std::uint64_t>(epoch));
    std::shuffle(m_perm.begin(), m_perm.end(), rng);
    m_epoch = epoch;
  }
  return m_perm[static_cast<std::size_t>(position % n)];
}

torch::Tensor ClipDataset::trainSample(std::int64_t position) {
  const std::int64_t slot = itemAt(position);
  const std::uint64_t draw = mix(mix(m_seed) ^ static_cast<std::uint64_t>(position));
  const std::int64_t n = trainSize();
  // A file that fails is replaced by the next one in the list: the same choice whichever thread
  // or run meets the failure first, so runs stay deterministic.
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t item = m_train[static_cast<std::size_t>((slot + k) % n)];
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      if (m_bad_items.count(item)) continue;
    }
    try {
      return load(item, draw, true);
    } catch (const media::MediaError& e) {
      std::lock_guard<std::mutex> guard(m_mutex);
      if (m_bad_items.emplace(item, e.reason()).second) {
        m_new_skips.push_back({m_index.files[static_cast<std::size_t>(item)].path, e.reason()});
        ++m_runtime_skips;
      }
    }
  }
  // Named here too: the run ends before any step could report them as warnings.
  std::string named;
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    int listed = 0;
    for (const auto& [item, reason] : m_bad_items) {
      if (listed++ == 3) {
        named += "; and " + std::to_string(m_bad_items.size() - 3) + " more";
        break;
      }
      named += std::string(named.empty() ? "" : "; ") +
               m_index.files[static_cast<std::size_t>(item)].path + ": " + reason;
    }
  }
  throw DataError(
      "dataset_empty",
      "data.path \"" + m_data.path + "\": every training file failed to decode (" + named + ")",
      "check the files named in the warnings");
}

std::string ClipDataset::itemSource(std::int64_t item, bool train) const {
  if (m_synthetic) return "synthetic:" + std::to_string(item);
  return indexOf(train).files[static_cast<std::size_t>(item)].path;
}

std::string ClipDataset::trainSource(std::int64_t position) {
  return itemSource(m_train[static_cast<std::size_t>(itemAt(position))], true);
}

std::string ClipDataset::validSource(std::int64_t i) const {
  return itemSource(m_valid[static_cast<std::size_t>(i % validSize())], false);
}

std::vector<std::int64_t> ClipDataset::validPicks(std::int64_t count) const {
  const std::int64_t n = std::min(count, validSize());
  std::vector<std::int64_t> picks;
  for (std::int64_t i = 0; i < n; ++i) picks.push_back(i * validSize() / n);
  return picks;
}

torch::Tensor ClipDataset::validSample(std::int64_t i) {
  TORCH_CHECK(!m_valid.empty(), "ClipDataset: no validation split");
  const std::int64_t item = m_valid[static_cast<std::size_t>(i % validSize())];
  return load(item, 0, false);
}

torch::Tensor ClipDataset::load(std::int64_t item, std::uint64_t draw, bool train) {
  const bool flip = train && m_data.hflip && (draw >> 63) != 0;
  // Training crops (data.train_crop, data.train_frames) are windows of what validation sees.
  const std::int64_t size = m_data.image_size;
  const std::int64_t crop = train && m_data.train_crop > 0 ? m_data.train_crop : size;
  const int frames = train && m_data.train_frames > 0 ? m_data.train_frames : m_data.num_frames;
  // A window of `frames` x `crop` x `crop` of a whole clip [3, T, size, size], at the draw's place.
  const auto window = [&](torch::Tensor clip) {
    if (crop == size && frames >= clip.size(1)) return clip;
    const auto pick = [&](int shift, std::int64_t room) {
      return static_cast<std::int64_t>((draw >> shift) % static_cast<std::uint64_t>(room + 1));
    };
    const std::int64_t t0 = pick(40, clip.size(1) - frames), y0 = pick(8, size - crop),
                       x0 = pick(24, size - crop);
    return clip.slice(1, t0, t0 + frames)
        .slice(2, y0, y0 + crop)
        .slice(3, x0, x0 + crop)
        .contiguous();
  };
  if (m_synthetic) {
    const torch::Tensor clip = window(m_synthetic->clip(item));
    return flip ? clip.flip({3}) : clip;
  }
  if (const ClipShards* shards = this->shards(train)) {
    // The clip is drawn with the bits that draw a video's start frame; validation takes the
    // middle one. Shards hold centre squares already, so data.crop has nothing to choose.
    const std::uint64_t n = shards->clips(static_cast<std::size_t>(item)).size();
    const std::uint64_t k = !train                                        ? (n - 1) / 2
                            : m_data.clip_start == core::ClipStart::First ? 0
                                                                          : (draw >> 40) % n;
    const ShardSettings& s = shards->settings();
    torch::Tensor clip = media::framesToTensor(shards->pixels(static_cast<std::size_t>(item), k),
                                               s.num_frames, s.image_size, s.image_size);
    if (train) clip = window(clip);  // data.train_crop, data.train_frames
    return flip ? clip.flip({3}).contiguous() : clip;
  }
  const DatasetIndex& index = indexOf(train);
  const IndexedFile& file = index.files[static_cast<std::size_t>(item)];
  const std::string path = index.absolute(file).string();
  const auto [sh, sw] = resizedShape(file.height, file.width, size);
  std::int64_t top = -1, left = -1;
  if (train && (m_data.crop == core::CropMode::Random || crop < size)) {
    top = static_cast<std::int64_t>((draw >> 8) % static_cast<std::uint64_t>(sh - crop + 1));
    left = static_cast<std::int64_t>((draw >> 24) % static_cast<std::uint64_t>(sw - crop + 1));
    if (m_data.crop == core::CropMode::Center) {  // a random window of the centre square
      top = (sh - size) / 2 + top % (size - crop + 1);
      left = (sw - size) / 2 + left % (size - crop + 1);
    }
  }
  torch::Tensor clip;
  if (m_data.type == core::DataType::Videos) {
#if TB_WITH_FFMPEG
    const int needed = (frames - 1) * m_data.frame_stride + 1;
    const int room = file.frames - needed;
    media::ClipRequest request;
    request.start =
        !train ? room / 2
               : (m_data.clip_start == core::ClipStart::First
                      ? 0
                      : static_cast<int>((draw >> 40) % static_cast<std::uint64_t>(room + 1)));
    request.count = frames;
    request.stride = m_data.frame_stride;
    request.resizeShortSide = static_cast<int>(size);
    request.cropSize = static_cast<int>(crop);
    request.cropX = static_cast<int>(left);
    request.cropY = static_cast<int>(top);
    // The index counted the frames: no second demux of the whole file for every clip.
    media::VideoDecoderOptions options;
    options.known = media::KnownFrames{file.frames, file.sparse_timestamps};
    media::VideoDecoder decoder(path, options);
    clip = media::framesToTensor(decoder.decode(request));
#else
    throw media::MediaError(path, "this build has no FFmpeg");
#endif
  } else {
#if TB_WITH_OPENCV
    clip =
        resizeAndCrop(media::framesToTensor(media::ImageReader::read(path)), size, top, left, crop);
#else
    throw media::MediaError(path, "this build has no OpenCV");
#endif
  }
  return flip ? clip.flip({3}).contiguous() : clip;
}

std::vector<SkippedFile> ClipDataset::takeNewSkips() {
  std::lock_guard<std::mutex> guard(m_mutex);
  return std::exchange(m_new_skips, {});
}

std::int64_t ClipDataset::skippedCount() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return static_cast<std::int64_t>(m_index_skips.size()) + m_runtime_skips;
}

std::string ClipDataset::describe() const {
  std::ostringstream s;
  if (m_synthetic) {
    s << "synthetic: " << m_data.synthetic_clips << " procedural clips (" << validSize()
      << " for validation)";
  } else {
    s << core::choiceName(m_data.type) << " in " << m_data.path << ": " << m_index.files.size()
      << " files";
    if (m_shards)
      s << ", " << m_shards->clipCount() << " clips in " << m_shards->usableShards() << " shards";
    s << " (";
    if (m_data.valid_path.empty()) {
      s << validSize() << " for validation";
    } else {
      s << "validation: " << validSize() << " in " << m_data.valid_path;
    }
    s << "), " << m_index_skips.size() << " skipped";
    if (!m_shards) {
      s << ", index " << m_index.reused + m_valid_index.reused << " cached + "
        << m_index.probed + m_valid_index.probed << " probed";
    }
  }
  return s.str();
}

ClipLoader::ClipLoader(ClipDataset& dataset, int batch_size, int workers, int prefetch, int rank,
                       int world_size, bool pin)
    : m_dataset(dataset),
      m_batch_size(batch_size),
      m_workers(workers),
      m_prefetch(std::max(1, prefetch)),
      m_rank(rank),
      m_world(world_size),
      m_pin(pin) {
  restart(0);
}

ClipLoader::~ClipLoader() { stopWorkers(); }

void ClipLoader::stopWorkers() {
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  for (auto& t : m_threads) t.join();
  m_threads.clear();
}

void ClipLoader::restart(std::int64_t first) {
  stopWorkers();
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_ready.clear();
    m_failed.clear();
    m_next_claim = m_next_consume = first;
    m_stop = false;
  }
  for (int i = 0; i < m_workers; ++i) m_threads.emplace_back([this] { work(); });
}

torch::Tensor ClipLoader::build(std::int64_t k) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> clips;
  clips.reserve(static_cast<std::size_t>(m_batch_size));
  for (int i = 0; i < m_batch_size; ++i) {
    clips.push_back(m_dataset.trainSample((k * m_world + m_rank) * m_batch_size + i));
  }
  const torch::Tensor batch = torch::stack(clips);
  return m_pin ? compat::pinned(batch) : batch;
}

void ClipLoader::work() {
  for (;;) {
    std::int64_t k = 0;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [&] { return m_stop || m_next_claim < m_next_consume + m_prefetch; });
      if (m_stop) return;
      k = m_next_claim++;
    }
    torch::Tensor batch;
    std::exception_ptr failure;
    try {
      batch = build(k);
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> guard(m_mutex);
      if (m_stop) return;
      if (failure) {
        m_failed[k] = failure;
      } else {
        m_ready[k] = std::move(batch);
      }
    }
    m_cv.notify_all();
  }
}

LoadedBatch ClipLoader::next() {
  const auto start = std::chrono::steady_clock::now();
  LoadedBatch out;
  if (m_workers == 0) {
    out.clips = build(m_next_consume++);
  } else {
    std::unique_lock<std::mutex> lock(m_mutex);
    const std::int64_t k = m_next_consume;
    m_cv.wait(lock, [&] { return m_ready.count(k) || m_failed.count(k); });
    if (auto f = m_failed.find(k); f != m_failed.end()) std::rethrow_exception(f->second);
    out.clips = std::move(m_ready[k]);
    m_ready.erase(k);
    ++m_next_consume;
    lock.unlock();
    m_cv.notify_all();
  }
  out.wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tb::trainer::data
