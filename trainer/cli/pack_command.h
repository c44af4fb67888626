#pragma once
// The `pack` subcommand: decode a configuration's dataset once into clip shards (see
// trainer/data/clip_shards.h), so training reads them with `data.type: shards` and never decodes.

#include <string>

namespace tb::trainer::cli {

struct PackArgs {
  std::string config;     ///< configuration file, or "-" for standard input
  std::string preset;     ///< preset name when no file is given
  std::string out;        ///< the shard folder to create (must be missing or empty)
  double shard_mb = 256;  ///< pixels per shard, in MiB (a shard holds at least one clip)
  int threads = 0;        ///< decoding threads; 0: data.workers (at least 1)
};

/// `pack`: reads data.path as training would index it (data.type videos, images or synthetic;
/// files that cannot be used are named on stderr and in the manifest's "skipped") and writes
/// every clip into shards under `out`: data.image_size squares (short side resized, centre
/// crop: the pixels validation decodes), data.num_frames frames every data.frame_stride; a video
/// gives its consecutive non-overlapping clips, an image or a procedural clip one. Prints one
/// JSON object on stdout: {"out", "shards", "clips", "sources", "frames", "bytes", "skipped",
/// "content_hash", "seconds", "clips_per_s"}. Exit 0; 2 for a bad configuration, an unusable
/// dataset, an --out that is not empty, or data this build cannot decode (videos without
/// FFmpeg, images without OpenCV); 1 when writing fails.
int pack(const PackArgs& args);

}  // namespace tb::trainer::cli
