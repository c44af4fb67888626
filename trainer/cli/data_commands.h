#pragma once
// The `data-info` subcommand: what a configuration's dataset holds, for the Setup page and for
// users checking a folder before they train on it.

#include <string>

namespace tb::trainer::cli {

struct DataInfoArgs {
  std::string config;   ///< configuration file, or "-" for standard input
  std::string preset;   ///< preset name when no file is given
  std::string preview;  ///< folder for preview strips; empty: none
  int preview_clips = 4;
  bool verify = false;  ///< shards: check every shard's content hash too (reads every byte)
};

/// `data-info`: opens the dataset of the configuration as training would (index, skipped files,
/// split) and prints one JSON object on stdout:
///   {"type", "path", "files", "train_files", "valid_files", "train_clips", "valid_clips",
///    "frames": {"min", "max", "total"}, "resolutions": [{"width", "height", "files"}],
///    "skipped": [{"path", "reason"}], "preview": [{"source", "png"}]}
/// For procedural data files and frames count clips. For shards, files are the packed sources
/// (frames and resolutions are theirs), train_clips counts the clips of the training sources,
/// skipped names damaged shards, and "shards": {"data_type", "image_size", "num_frames",
/// "frame_stride", "count", "usable", "clips", "bytes", "verified"} describes data.path's
/// shards (and "valid_shards" data.valid_path's). With a preview folder, writes
/// preview_<k>.png there: the frames (at most 8) of validation clip k (training clip k when no
/// clip is held out) at data.image_size, left to right. Exit 0; 2 for an invalid configuration or
/// an unusable dataset (the message names the field or file); 1 when the preview cannot be written.
int dataInfo(const DataInfoArgs& args);

}  // namespace tb::trainer::cli
