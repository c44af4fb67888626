#include "trainer/baseline/reference_fit.h"

#include "core/atomic_file.h"
#include "core/config_io.h"
#include "trainer/baseline/block_kmeans.h"
#include "trainer/evaluation/validator.h"

#include <algorithm>
#include <chrono>

namespace tb::trainer::baseline {
namespace fs = std::filesystem;

namespace {

torch::Tensor blockRows(const torch::Tensor& blocks) {
  return blocks.movedim(1, -1).reshape({-1, blocks.size(1)});
}

}  // namespace

ReferenceFit fitReferenceCodec(const core::RunConfig& config, data::ClipDataset& dataset,
                               const ReferenceFitOptions& options,
                               const std::function<void(const std::string&)>& log,
                               const FitProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  auto say = [&](const std::string& text) {
    if (log) log(text);
  };
  auto advance = [&](const std::string& stage, std::int64_t done, std::int64_t total) {
    if (progress) progress(stage, done, total);
  };
  torch::NoGradGuard no_grad;
  const ReferenceShape shape = referenceShapeOf(config);
  const BlockGeometry& g = shape.geometry;
  const std::int64_t dim = g.blockDim(), books = g.codebooks();
  // Cutting needs no centroids: a codec with one placeholder row per codebook.
  ClassicVqCodec cutter(g, torch::zeros({books, 1, dim}));

  std::vector<std::vector<torch::Tensor>> parts(static_cast<std::size_t>(books));
  std::vector<std::int64_t> have(static_cast<std::size_t>(books), 0);
  auto add = [&](std::int64_t book, const torch::Tensor& rows) {
    if (have[static_cast<std::size_t>(book)] >= options.blocks) return;
    parts[static_cast<std::size_t>(book)].push_back(rows.contiguous());
    have[static_cast<std::size_t>(book)] += rows.size(0);
  };
  std::int64_t clips = 0;
  // Procedural clips repeat after an epoch; a video gives another clip at every position (random
  // starts and crops), so a few videos can still fill the codebooks.
  const std::int64_t limit = config.data.type == core::DataType::Synthetic
                                 ? 4 * dataset.trainSize()
                                 : std::max<std::int64_t>(4 * dataset.trainSize(), 4096);
  const std::string drawing = "drawing blocks from the training clips";
  advance(drawing, 0, options.blocks);
  for (std::int64_t p = 0;
       p < limit && *std::min_element(have.begin(), have.end()) < options.blocks; ++p) {
    advance(drawing, std::min(*std::min_element(have.begin(), have.end()), options.blocks),
            options.blocks);
    const torch::Tensor clip = dataset.trainSample(p);  // [3, T, H, W]
    ++clips;
    const torch::Tensor blocks = cutter.encode(clip.unsqueeze(0));
    if (books == 2) {
      // A first-frame block is a block of one frame coded alone: every frame of the clip is one.
      add(0, blockRows(cutter.encode(clip.transpose(0, 1).unsqueeze(2))));
      add(1, blockRows(blocks.slice(2, 1)));
    } else {
      add(0, blockRows(blocks));
    }
  }

  std::vector<torch::Tensor> codebooks;
  std::int64_t fitted = 0;
  for (std::int64_t book = 0; book < books; ++book) {
    torch::Tensor points = torch::cat(parts[static_cast<std::size_t>(book)]);
    parts[static_cast<std::size_t>(book)].clear();
    if (points.size(0) > options.blocks) {
      // Evenly spread over every clip drawn, not the first clips only.
      points = points.index_select(
          0, torch::linspace(0, static_cast<double>(points.size(0) - 1), options.blocks)
                 .round()
                 .to(torch::kInt64));
    }
    if (points.size(0) < shape.codebook_size) {
      throw data::DataError("dataset_too_small",
                            "the classic VQ reference needs at least " +
                                std::to_string(shape.codebook_size) + " blocks per codebook; " +
                                std::to_string(clips) + " training clips gave " +
                                std::to_string(points.size(0)));
    }
    say("classic VQ: k-means of " + std::to_string(points.size(0)) + " blocks of " +
        std::to_string(dim) + " values into " + std::to_string(shape.codebook_size) + " centroids" +
        (books == 2 ? (book == 0 ? " (first frame)" : " (later frames)") : std::string()));
    advance("k-means of the blocks into " + std::to_string(shape.codebook_size) + " centroids",
            book, books);
    KMeansOptions km;
    km.clusters = shape.codebook_size;
    km.iterations = options.iterations;
    km.seed = options.seed + static_cast<std::uint64_t>(book);
    codebooks.push_back(fitKMeans(points, km).centroids);
    fitted += points.size(0);
  }

  ReferenceFit fit;
  fit.codec = std::make_shared<ClassicVqCodec>(g, torch::stack(codebooks));
  fit.codec->eval();
  core::ReferenceCodecInfo& info = fit.info;
  info.name = classicVqName(shape.bits_per_token);
  info.bits_per_token = shape.bits_per_token;
  info.codebook_size = shape.codebook_size;
  info.codebooks = books;
  info.token_grid =
      g.tokenGrid(config.data.type == core::DataType::Images ? 1 : config.data.num_frames,
                  config.data.image_size);
  info.fit_blocks = fitted;
  info.fit_clips = clips;
  info.seed = options.seed;

  const std::vector<std::int64_t> picks = dataset.validPicks(options.valid_clips);
  if (!picks.empty()) {
    // Scored as training's validation scores the tokenizer, on the same clips.
    Validator validator(*fit.codec, nullptr, config.loss.recon);
    const auto count = static_cast<std::int64_t>(picks.size());
    for (std::int64_t k = 0; k < count; ++k) {
      advance("scoring it on the validation clips", k, count);
      validator.score(dataset.validSample(picks[static_cast<std::size_t>(k)]), torch::kCPU);
    }
    info.valid_psnr = validator.summary().psnr;
    info.valid_ssim = validator.summary().ssim;
    info.valid_clips = static_cast<std::int64_t>(picks.size());
  }
  info.fit_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fit;
}

void writeReferenceFolder(const ReferenceFit& fit, const core::RunConfig& config,
                          const fs::path& dir) {
  fs::create_directories(dir);
  core::writeFileAtomically(dir / "config.json", core::toJsonText(config));
  saveCodec(*fit.codec, dir / kCodecFile,
            {{"name", fit.info.name}, {"seed", std::to_string(fit.info.seed)}});
  core::writeFileAtomically(dir / kReferenceFile, core::toJsonText(fit.info));
}

}  // namespace tb::trainer::baseline
