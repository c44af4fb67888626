#pragma once
// `evaluate`: tokenizers scored as papers score them, over a folder of images (rFID, e.g. the
// 50,000 ImageNet validation images) or videos (rFVD, e.g. the UCF-101 test split), beside
// PSNR, SSIM and LPIPS; with an evaluation card that records every choice the numbers depend on.

#include <cstdint>
#include <string>
#include <vector>

namespace tb::trainer::cli {

struct EvaluateArgs {
  std::vector<std::string> checkpoints;  ///< NAME=PATH words (checkpoint folder or run directory)
  std::string data;                      ///< folder of images or videos
  std::string data_type;                 ///< "images" or "videos"; empty: images when it has any
  std::string out;                       ///< folder for metrics.json, card.md, card.json
  std::string split;                     ///< the data's name in the card; empty: the folder's
  std::string fid_weights;               ///< pt_inception-2015-12-05-6726825d.pth
  std::string fvd_weights;               ///< i3d_pretrained_400.pt
  std::string lpips_net = "alex";
  std::string lpips_backbone;
  std::string lpips_lin;
  std::int64_t num = 0;  ///< clips (images or videos) to evaluate; 0: every usable file
  int image_size = 0;    ///< side after resize and centre crop; 0: the first checkpoint's
  int frames = 0;        ///< frames per video clip; 0: the first checkpoint's data.num_frames
  int batch = 0;         ///< clips per feature-network batch; 0: 16 images or 4 videos
  std::string cache;     ///< folder of cached reals' statistics; empty: the user's cache folder
  std::string device = "auto";
  bool raw_weights = false;  ///< model.safetensors even where EMA weights exist
};

/// Streams the first N files (a seeded shuffle of the folder's usable files, the same for every
/// tokenizer) through each tokenizer: each file resized (short side to S, bilinear) and centre
/// cropped S x S, videos from their first frame; reconstructions rounded to 8 bits as a saved
/// file would be. Feature statistics are accumulated in float64, never the features themselves,
/// so memory does not grow with N. The reals' statistics are cached under the SHA-256 of the
/// protocol, the weight file and the N files' bytes, and reused by a second run on the same data.
/// Writes out/metrics.json, out/card.json and out/card.md; prints the card's table on stdout and
/// a progress line with an ETA on stderr. Exit 0; 2 for bad arguments, unreadable weights or
/// data (naming the file); 1 when writing fails.
int evaluate(const EvaluateArgs& args);

}  // namespace tb::trainer::cli
