#pragma once
// The run directory: the source of truth for one training run. The event stream is only a fast
// path; a window that opens a run later reads the same files. Layout (fixed):
//
//   <root>/
//     config.json          run configuration the trainer reads (written by the front end)
//     metrics.jsonl        one flat JSON object per line, appended by rank 0 (see MetricsLog)
//     events.jsonl         every protocol event rank 0 emitted after taking the lock, one per line
//     data_index.json      cached dataset index (may be deleted at any time)
//     .lock                held by the trainer while it runs
//     tensorboard/         TensorBoard event files
//     samples/             GIF/PNG samples (written to a temporary name, then renamed)
//     codebook/            step_<N>.safetensors: int64 "counts" [codebook size], code uses at
//                          the validation of step N
//     checkpoints/
//       step_<N>/          one checkpoint, N = optimizer step, no zero padding (its files:
//                          core/checkpoint_files.h; COMPLETE written last)
//       .step_<N>.tmp/     being written; renamed to step_<N> when complete
//     logs/                one log per rank
//     reference/           the classic VQ reference codec fitted for this run's configuration
//                          (train.reference_codec or `tokenbench-trainer baseline`): config.json,
//                          codec.safetensors, reference.json (see ReferenceCodecInfo)
//
// RunDirectory only computes paths and inspects/creates folders; it owns no open files.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tb::core {

class RunDirectory {
 public:
  /// `root` may be relative (to the current directory) and need not exist yet.
  explicit RunDirectory(std::filesystem::path root);

  const std::filesystem::path& root() const { return m_root; }
  std::filesystem::path configFile() const;         ///< <root>/config.json
  std::filesystem::path metricsFile() const;        ///< <root>/metrics.jsonl
  std::filesystem::path indexCacheFile() const;     ///< <root>/data_index.json
  std::filesystem::path lockFile() const;           ///< <root>/.lock
  std::filesystem::path tensorboardDir() const;     ///< <root>/tensorboard
  std::filesystem::path samplesDir() const;         ///< <root>/samples
  std::filesystem::path eventsFile() const;         ///< <root>/events.jsonl
  std::filesystem::path codebookDir() const;        ///< <root>/codebook
  std::filesystem::path checkpointsDir() const;     ///< <root>/checkpoints
  std::filesystem::path logsDir() const;            ///< <root>/logs
  std::filesystem::path referenceDir() const;       ///< <root>/reference
  std::filesystem::path referenceInfoFile() const;  ///< <root>/reference/reference.json

  /// <root>/checkpoints/step_<step>. Throws std::invalid_argument when step < 0.
  std::filesystem::path checkpointDir(std::int64_t step) const;
  /// <root>/codebook/step_<step>.safetensors. Throws std::invalid_argument when step < 0.
  std::filesystem::path codebookFile(std::int64_t step) const;
  /// <root>/checkpoints/.step_<step>.tmp, where a checkpoint is written before the rename that
  /// publishes it. Throws std::invalid_argument when step < 0.
  std::filesystem::path checkpointTempDir(std::int64_t step) const;

  /// Creates the root and every subfolder (existing ones are fine). Throws std::runtime_error
  /// naming the path that could not be created.
  void create() const;

  /// Every file and folder of the layout above, the root's own entries.
  std::vector<std::filesystem::path> layoutEntries() const;
  /// The first entry of the layout that is a symbolic link, or empty: a run writes its files in
  /// place, so a planted link would send them (and a truncation) elsewhere.
  std::filesystem::path firstLinkedEntry() const;
  /// Whether the root holds files and folders of which none belongs to a run (a folder of
  /// videos given as --run-dir). False for a missing or empty root.
  bool holdsOnlyOtherFiles() const;
  /// Why a trainer must not write here (firstLinkedEntry, holdsOnlyOtherFiles), as a sentence
  /// naming the path; empty when it may.
  std::string writeProblem() const;

  /// True when `path` (relative paths are taken relative to root) lies inside the root, the root
  /// itself included, after weakly_canonical resolution: rejects `..` escapes, absolute paths
  /// elsewhere and symlinks (that exist) pointing outside. Never throws; false on any error.
  bool contains(const std::filesystem::path& path) const;

  /// Steps of complete checkpoints (folders `step_<N>` holding a COMPLETE file), ascending.
  /// Temporary folders, incomplete folders, zero-padded or otherwise odd names are ignored.
  /// An absent checkpoints folder gives an empty list. Never throws.
  std::vector<std::int64_t> listCheckpointSteps() const;

 private:
  std::filesystem::path m_root;
};

}  // namespace tb::core
