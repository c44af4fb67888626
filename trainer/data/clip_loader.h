#pragma once
// ClipDataset: the training and validation clips of a run (procedural, video folder, image
// folder or clip shards), each sample a pure function of (seed, position), so a resumed run, a
// second rank or another number of loader threads sees exactly the same clips. ClipLoader: worker
// threads that assemble batches ahead of the training step in a bounded queue.

#include "core/run_config.h"
#include "trainer/data/clip_shards.h"
#include "trainer/data/dataset_index.h"
#include "trainer/data/synthetic_clips.h"
#include "trainer/user_error.h"

#include <torch/torch.h>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tb::trainer::data {

/// A dataset that cannot be used at all; code is the `error` event code
/// ("data_path_missing", "dataset_empty", "data_config_invalid").
using DataError = UserError;

/// `[3, T, H, W]` -> short side `size` (bicubic, antialiased when shrinking), then the square of
/// side `crop` (-1: `size`) whose top-left corner is (top, left) in the resized clip, or the
/// centre one when they are -1.
torch::Tensor resizeAndCrop(const torch::Tensor& clip, std::int64_t size, std::int64_t top = -1,
                            std::int64_t left = -1, std::int64_t crop = -1);

class ClipDataset {
 public:
  /// Opens the dataset `data` describes. For folders, the index is cached in `index_cache`
  /// (empty: none) and probing uses `probe_threads`; shards are checked against their
  /// manifest's content hashes too with `verify_shards` (reading every byte). Throws DataError
  /// when the folder is missing, the config does not fit the data, or no file is usable.
  ClipDataset(const core::DataConfig& data, std::uint64_t seed,
              const std::filesystem::path& index_cache = {}, int probe_threads = 1,
              bool verify_shards = false);

  std::int64_t trainSize() const { return static_cast<std::int64_t>(m_train.size()); }
  std::int64_t validSize() const { return static_cast<std::int64_t>(m_valid.size()); }

  /// Training sample at global `position` (position / trainSize() is the epoch): the item of a
  /// per-epoch seeded permutation, with start frame, crop and flip drawn from (seed, position).
  /// `[3, T, H, W]` float in [-1, 1]. A file that fails to decode is marked bad (recorded for
  /// takeNewSkips()) and the next usable item is used instead; throws DataError when none is left.
  torch::Tensor trainSample(std::int64_t position);

  /// The file (relative to data.path) or "synthetic:<clip>" that trainSample(position) starts
  /// from (before any replacement of a broken file).
  std::string trainSource(std::int64_t position);

  /// The validation samples that scoring `count` of them uses: spread evenly over the split in
  /// its order (all of them when count >= validSize()), so that held-out clips cut from several
  /// videos are all represented, not only the first video in name order.
  std::vector<std::int64_t> validPicks(std::int64_t count) const;

  /// Validation sample `i` (modulo validSize()): the middle clip of the file, centre crop, no flip.
  torch::Tensor validSample(std::int64_t i);
  /// The file (relative to data.path, or to data.valid_path when set) or "synthetic:<clip>" of
  /// validSample(i).
  std::string validSource(std::int64_t i) const;

  /// The folder's index (files with frames, fps and size); empty for procedural data. For
  /// shards: the packed source files, and the damaged shards as skipped.
  const DatasetIndex& index() const { return m_index; }
  /// The shard folder training (or validation) items come from; null unless data.type is
  /// "shards".
  const ClipShards* shards(bool train = true) const {
    return train || m_data.valid_path.empty() ? m_shards.get() : m_valid_shards.get();
  }

  /// Files skipped at indexing time and since (decode failures during training).
  const std::vector<SkippedFile>& indexSkips() const { return m_index_skips; }
  /// Decode failures found since the last call, for warnings and the `data/skipped_files` metric.
  std::vector<SkippedFile> takeNewSkips();
  /// Every file skipped so far (index + decode failures).
  std::int64_t skippedCount() const;

  /// e.g. "videos in data/clips: 40 files (4 for validation), 2 skipped, index 38 cached + 4
  /// probed".
  std::string describe() const;

 private:
  /// The index of `folder` (`key` names it in errors); its skips join m_index_skips.
  DatasetIndex indexFolder(const std::string& key, const std::string& folder,
                           const std::filesystem::path& cache, int probe_threads);
  /// Opens the shard folder `folder` into m_shards (data.path) or m_valid_shards; throws
  /// DataError when it was packed with other data.image_size, num_frames or frame_stride.
  DatasetIndex openShards(const std::string& key, const std::string& folder);
  /// Where training (or validation) items point: m_index, or m_valid_index with data.valid_path.
  const DatasetIndex& indexOf(bool train) const;
  torch::Tensor load(std::int64_t item, std::uint64_t draw, bool train);
  std::string itemSource(std::int64_t item, bool train) const;
  std::int64_t itemAt(std::int64_t position);

  core::DataConfig m_data;
  std::uint64_t m_seed;
  bool m_verify_shards = false;  ///< check the shards' content hashes when opening them
  std::unique_ptr<SyntheticClips> m_synthetic;
  DatasetIndex m_index;
  DatasetIndex m_valid_index;                  ///< data.valid_path's files (empty without it)
  std::unique_ptr<ClipShards> m_shards;        ///< data.path's shards (data.type "shards")
  std::unique_ptr<ClipShards> m_valid_shards;  ///< data.valid_path's shards, when set
  std::vector<std::int64_t> m_train;           ///< items: clip index (synthetic) or file index
  std::vector<std::int64_t> m_valid;
  std::vector<SkippedFile> m_index_skips;

  mutable std::mutex m_mutex;  ///< guards everything below (shared by loader threads)
  std::map<std::int64_t, std::string>
      m_bad_items;  ///< training items that failed to decode, and why
  std::vector<SkippedFile> m_new_skips;
  std::int64_t m_runtime_skips = 0;
  std::int64_t m_epoch = -1;
  std::vector<std::int64_t> m_perm;
};

/// One batch and what it cost to wait for it.
struct LoadedBatch {
  torch::Tensor clips;  ///< [B, 3, T, H, W]
  double wait_s = 0;    ///< time next() blocked
};

/// Batches k = first, first + 1, ... of this rank: batch k holds the samples at global positions
/// (k * world_size + rank) * batch_size + i. `workers` threads build batches ahead, at most
/// `prefetch` beyond the one being consumed; with 0 workers next() builds them itself. With
/// `pin`, batches are built in page-locked memory (when CUDA is available), so that copying them
/// to the GPU with non_blocking does not block the training thread.
class ClipLoader {
 public:
  ClipLoader(ClipDataset& dataset, int batch_size, int workers, int prefetch, int rank = 0,
             int world_size = 1, bool pin = false);
  ~ClipLoader();
  ClipLoader(const ClipLoader&) = delete;
  ClipLoader& operator=(const ClipLoader&) = delete;

  /// Drops whatever was prefetched and continues at batch `first` (resume, rollback).
  void restart(std::int64_t first);
  /// The next batch; rethrows a DataError raised while building it.
  LoadedBatch next();

 private:
  torch::Tensor build(std::int64_t k);
  void stopWorkers();
  void work();

  ClipDataset& m_dataset;
  int m_batch_size, m_workers, m_prefetch, m_rank, m_world;
  bool m_pin;

  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_stop = false;
  std::int64_t m_next_claim = 0;    ///< next batch a worker takes
  std::int64_t m_next_consume = 0;  ///< next batch next() returns
  std::map<std::int64_t, torch::Tensor> m_ready;
  std::map<std::int64_t, std::exception_ptr> m_failed;
  std::vector<std::thread> m_threads;
};

}  // namespace tb::trainer::data
