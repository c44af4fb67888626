#pragma once
// The compare report: what `tokenbench-trainer compare --out DIR` writes to DIR/metrics.json and
// the Compare page reads back. Both sides use this struct and its JSON, tested against
// tests/golden/compare_report_v1.json.
//
//   {"version":1,
//    "tokenizers":[{"name":..,"checkpoint":..,"weights":..,"model_kind":..[,"label":..]
//                   [,"source":..][,"token_grid":[t,h,w]][,"bits_per_token":..]}, ...],
//    "clips":[{"clip":k,"source":..,"frames":..,"width":..,"height":..,
//              "metrics":{<name>:{"psnr":..,"ssim":..[,"lpips":..]}, ...}}, ...],
//    "mean":{<name>:{"psnr":..,"ssim":..[,"lpips":..]}, ...},
//    "per_frame":{<name>:{"psnr":[..],"ssim":[..]}, ...}
//    [,"rfid_samples":N][,"rfvd_samples":N]}       (and "rfid" / "rfvd" in "mean")
//
// Written with two-space indentation and a final newline (toJsonText). Readers accept a document
// without "version" or "per_frame" (trainers before them) and refuse another version. The
// structs below describe their keys once (describe(), core/document_field.h).

#include "core/document_field.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tb::core {

/// Version of the compare report this build writes and reads.
inline constexpr int kCompareReportVersion = 1;

/// Scores of one tokenizer on one clip, or their mean over the clips. A score that is not a
/// finite number (PSNR of a perfect reconstruction) is written as null and read back as NaN.
struct CompareScores {
  double psnr = std::numeric_limits<double>::quiet_NaN();  ///< dB, higher is better
  double ssim = std::numeric_limits<double>::quiet_NaN();  ///< [0, 1], higher is better
  /// LPIPS distance (lower is better); absent when compare ran without LPIPS weights.
  std::optional<double> lpips;
  /// rFID / rFVD over every compared clip (in "mean" only; absent without --fid-weights /
  /// --fvd-weights). N is the report's rfid_samples / rfvd_samples: a few clips give a value
  /// biased far upward, for comparing these tokenizers with each other only.
  std::optional<double> rfid;
  std::optional<double> rfvd;

  template <class V>
  void describe(V& v) {
    v.field("psnr", psnr, DocField().nanAsNull());
    v.field("ssim", ssim, DocField().nanAsNull());
    v.field("lpips", lpips, DocField().nanAsNull());
    v.field("rfid", rfid, DocField().nanAsNull());
    v.field("rfvd", rfvd, DocField().nanAsNull());
  }
};

/// One `--checkpoint NAME=PATH` of the comparison.
struct CompareTokenizer {
  std::string name;        ///< column name, also the name of its PNG strips
  std::string checkpoint;  ///< checkpoint folder the trainer loaded
  std::string weights;     ///< weights file it loaded ("ema.safetensors", "model.safetensors")
  std::string model_kind;  ///< "magvit2", "vqgan", "classic_vq"
  std::string label;       ///< what a reference codec is ("classic VQ, 10 bits/token"); else ""
  /// Where the tokenizer comes from: an import's name ("taming vqgan_imagenet_f16_16384",
  /// "LlamaGen vq_ds16_c2i"), "Tokenbench MAGVIT-v2", ...; "" in reports before it.
  std::string source;
  /// Its token grid [t, h, w] for the compared clips; empty in reports before it.
  std::vector<std::int64_t> token_grid;
  double bits_per_token = 0;  ///< log2 of its codebook x codebooks; 0 in reports before it

  template <class V>
  void describe(V& v) {
    v.field("name", name);
    v.require(!name.empty(), "a tokenizer has an empty \"name\"");
    v.field("checkpoint", checkpoint);
    v.field("weights", weights);
    v.field("model_kind", model_kind);
    v.field("label", label, DocField().omitUnset());
    v.field("source", source, DocField().omitUnset());
    v.field("token_grid", token_grid, DocField().omitUnset());
    v.field("bits_per_token", bits_per_token, DocField().omitUnset());
  }
};

/// One compared clip; scores[k] belongs to tokenizers[k].
struct CompareClip {
  int index = 0;       ///< k of DIR/clip_<kkk>.gif
  std::string source;  ///< the file it came from, or "synthetic:<seed>"
  int frames = 0;      ///< frame count (0: a report that predates it)
  int width = 0;       ///< frame width in pixels (0: unknown)
  int height = 0;      ///< frame height in pixels (0: unknown)
  std::vector<CompareScores> scores;

  /// "metrics" holds `scores` by tokenizer name (`tokenizerNames`, the report's). Reports before
  /// "clip" number their clips by `position` in the list.
  template <class V>
  void describe(V& v, const std::vector<std::string>& tokenizerNames, int position) {
    v.fieldOr("clip", index, position);
    v.field("source", source, DocField().optional());
    v.field("frames", frames, DocField().optional());
    v.field("width", width, DocField().optional());
    v.field("height", height, DocField().optional());
    v.keyed("metrics", scores, tokenizerNames, "tokenizer");
  }
};

/// Mean scores by frame position over the clips (a causal tokenizer codes its first frame
/// alone, often worse than the rest); empty in reports that predate it.
struct CompareFrameMeans {
  std::vector<double> psnr;  ///< dB, one per frame position
  std::vector<double> ssim;

  template <class V>
  void describe(V& v) {
    v.field("psnr", psnr, DocField().nanAsNull());
    v.field("ssim", ssim, DocField().nanAsNull());
  }
};

/// DIR/metrics.json. Every per-tokenizer list (clip scores, mean, per_frame) follows
/// `tokenizers`' order; per_frame is empty or has one entry per tokenizer.
struct CompareReport {
  std::vector<CompareTokenizer> tokenizers;
  std::vector<CompareClip> clips;
  std::vector<CompareScores> mean;
  std::vector<CompareFrameMeans> per_frame;
  std::optional<std::int64_t> rfid_samples;  ///< frames behind the means' rfid
  std::optional<std::int64_t> rfvd_samples;  ///< clips behind the means' rfvd

  /// Names of `tokenizers`, in order: the keys of every per-tokenizer object.
  std::vector<std::string> tokenizerNames() const;

  /// The document's keys after "version", in order. A reader refuses a report without
  /// tokenizers or with two of one name.
  template <class V>
  void describe(V& v) {
    v.field("tokenizers", tokenizers, DocField().element("a tokenizer"));
    v.require(!tokenizers.empty(), "\"tokenizers\" is empty");
    const std::string repeated = repeatedTokenizerName();
    v.require(repeated.empty(), "two tokenizers are named \"" + repeated + "\"");
    const std::vector<std::string> names = tokenizerNames();
    v.field("clips", clips, DocField().element("a clip"),
            [&](auto& c, CompareClip& clip, std::size_t position) {
              clip.describe(c, names, static_cast<int>(position));
            });
    v.keyed("mean", mean, names, "tokenizer");
    v.keyed("per_frame", per_frame, names, "tokenizer", DocField().omitUnset());
    v.field("rfid_samples", rfid_samples);
    v.field("rfvd_samples", rfvd_samples);
  }

 private:
  // The first name two tokenizers share; "" when there is none.
  std::string repeatedTokenizerName() const;
};

/// The document: "version", then the keys of CompareReport::describe.
nlohmann::ordered_json toJson(const CompareReport& report);
/// toJson as the trainer writes it: indented by two spaces, with a final newline.
std::string toJsonText(const CompareReport& report);

/// Reads a document (JSON text). Returns nullopt, with the reason in `error` when given (e.g.
/// `compare report: missing "tokenizers"`), for anything else: no tokenizer, a tokenizer
/// without a name, two with one name, another version. Never throws.
std::optional<CompareReport> parseCompareReport(std::string_view text,
                                                std::string* error = nullptr);

}  // namespace tb::core
