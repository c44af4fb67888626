#include "trainer/baseline/classic_vq_codec.h"

#include "core/safetensors.h"
#include "trainer/baseline/block_kmeans.h"
#include "trainer/weights/state_dict_io.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tb::trainer::baseline {
namespace fs = std::filesystem;

std::array<std::int64_t, 3> BlockGeometry::tokenGrid(std::int64_t frames,
                                                     std::int64_t image_size) const {
  const std::int64_t t = first_frame_alone ? 1 + (frames - 1) / time_factor : frames / time_factor;
  return {t, image_size / space_factor, image_size / space_factor};
}

ReferenceShape referenceShapeOf(const core::RunConfig& config) {
  const core::DataConfig& d = config.data;
  const auto tokenizer = makeTokenizer(config.model, d);  // std::invalid_argument names the field
  const std::int64_t frames = d.type == core::DataType::Images ? 1 : d.num_frames;
  const auto grid = tokenizer->tokenGrid(frames, d.image_size);
  ReferenceShape shape;
  BlockGeometry& g = shape.geometry;
  g.channels = 3;
  if (grid[1] < 1 || d.image_size % grid[1] != 0) {
    throw std::invalid_argument("data.image_size: " + std::to_string(d.image_size) +
                                " is not a whole number of tokens (" + std::to_string(grid[1]) +
                                ")");
  }
  g.space_factor = d.image_size / grid[1];
  // A causal video tokenizer has 1 + (T - 1) / time_factor latent frames; frame-by-frame ones T.
  if (config.model.kind == core::ModelKind::Magvit2 && grid[0] > 1) {
    if ((frames - 1) % (grid[0] - 1) != 0) {
      throw std::invalid_argument("data.num_frames: " + std::to_string(frames) +
                                  " frames do not split into " + std::to_string(grid[0]) +
                                  " latent frames");
    }
    g.time_factor = (frames - 1) / (grid[0] - 1);
    g.first_frame_alone = g.time_factor > 1;
  } else {
    g.time_factor = grid[0] > 0 && frames % grid[0] == 0 ? frames / grid[0] : 1;
  }
  const auto q = tokenizer->quantizer();
  const double codes =
      std::pow(static_cast<double>(q->codebookSize()), static_cast<double>(q->numCodebooks()));
  if (codes > 65536.0) {
    throw std::invalid_argument(
        "model.quantizer: " + std::to_string(q->bitsPerToken()) +
        " bits per token; the classic VQ reference fits at most 2^16 centroids");
  }
  shape.codebook_size = static_cast<std::int64_t>(std::llround(codes));
  shape.bits_per_token = std::log2(codes);
  return shape;
}

std::string classicVqName(double bits_per_token) {
  char text[48];
  std::snprintf(text, sizeof text, "%.2f", bits_per_token);
  std::string bits = text;
  while (bits.back() == '0') bits.pop_back();
  if (bits.back() == '.') bits.pop_back();
  return "classic VQ, " + bits + " bits/token";
}

// ---- quantizer -------------------------------------------------------------------------------

ClassicVqQuantizer::ClassicVqQuantizer(const BlockGeometry& geometry, torch::Tensor codebooks)
    : m_geometry(geometry) {
  if (codebooks.dim() != 3 || codebooks.size(0) != geometry.codebooks() ||
      codebooks.size(2) != geometry.blockDim()) {
    throw std::invalid_argument("classic VQ: codebooks must be [" +
                                std::to_string(geometry.codebooks()) + ", k, " +
                                std::to_string(geometry.blockDim()) + "]");
  }
  m_codebooks = register_buffer("codebooks", codebooks.to(torch::kFloat32).contiguous());
}

QuantizerOutput ClassicVqQuantizer::quantize(const torch::Tensor& latent) {
  TORCH_CHECK(latent.dim() >= 3 && latent.size(1) == dim(), "classic VQ: expected blocks [B, ",
              dim(), ", ...], got ", latent.sizes());
  const torch::Tensor blocks = latent.movedim(1, -1).to(torch::kFloat32);  // [B, (t,) h, w, D]
  std::vector<torch::Tensor> parts;
  if (m_geometry.first_frame_alone && latent.dim() == 5) {
    const auto first = blocks.slice(1, 0, 1), rest = blocks.slice(1, 1);
    const auto index0 =
        nearestCentroid(first.reshape({-1, dim()}), m_codebooks[0]).view(first.sizes().slice(0, 4));
    const auto index1 =
        nearestCentroid(rest.reshape({-1, dim()}), m_codebooks[1]).view(rest.sizes().slice(0, 4));
    parts = {index0, index1};
  } else {
    parts = {nearestCentroid(blocks.reshape({-1, dim()}), m_codebooks[0])
                 .view(blocks.sizes().slice(0, blocks.dim() - 1))};
  }
  QuantizerOutput out;
  out.indices = parts.size() == 1 ? parts[0] : torch::cat(parts, 1);
  out.quantized = indicesToCodes(out.indices).to(latent.scalar_type());
  out.loss = torch::zeros({}, latent.options());
  return out;
}

torch::Tensor ClassicVqQuantizer::indicesToCodes(const torch::Tensor& indices) {
  auto look = [&](const torch::Tensor& idx, std::int64_t book) {
    return m_codebooks[book].index_select(0, idx.reshape({-1}).to(torch::kInt64)).view([&] {
      auto s = idx.sizes().vec();
      s.push_back(dim());
      return s;
    }());
  };
  torch::Tensor codes;
  if (m_geometry.first_frame_alone && indices.dim() == 4) {
    codes = torch::cat({look(indices.slice(1, 0, 1), 0), look(indices.slice(1, 1), 1)}, 1);
  } else {
    codes = look(indices, 0);
  }
  return codes.movedim(-1, 1).contiguous();
}

// ---- codec -----------------------------------------------------------------------------------

ClassicVqCodec::ClassicVqCodec(const BlockGeometry& geometry, torch::Tensor codebooks)
    : m_geometry(geometry),
      m_quantizer(register_module(
          "quantizer", std::make_shared<ClassicVqQuantizer>(geometry, std::move(codebooks)))) {}

torch::Tensor ClassicVqCodec::encode(const torch::Tensor& input, const torch::Tensor& /*cond*/) {
  torch::Tensor video = input.dim() == 4 ? input.unsqueeze(2) : input;
  const auto& g = m_geometry;
  TORCH_CHECK(video.dim() == 5 && video.size(1) == g.channels, "classic VQ: expected [B, ",
              g.channels, ", T, H, W], got ", input.sizes());
  const std::int64_t b = video.size(0), frames = video.size(2), height = video.size(3),
                     width = video.size(4);
  const std::int64_t sf = g.space_factor, tf = g.time_factor;
  TORCH_CHECK(height % sf == 0 && width % sf == 0, "classic VQ: ", height, "x", width,
              " is not a whole number of ", sf, "-pixel blocks");
  if (g.first_frame_alone) {
    TORCH_CHECK((frames - 1) % tf == 0, "classic VQ: ", frames,
                " frames are not 1 + a multiple of ", tf);
    // Frame 0 repeated time_factor times: its block has the other blocks' size, and distances
    // between such blocks are time_factor times the single frame's, so nearest stays nearest.
    video = torch::cat(
        {video.slice(2, 0, 1).expand({b, g.channels, tf, height, width}), video.slice(2, 1)}, 2);
  } else {
    TORCH_CHECK(frames % tf == 0, "classic VQ: ", frames, " frames are not a multiple of ", tf);
  }
  const std::int64_t t = video.size(2) / tf, h = height / sf, w = width / sf;
  return video.reshape({b, g.channels, t, tf, h, sf, w, sf})
      .permute({0, 1, 3, 5, 7, 2, 4, 6})
      .reshape({b, g.blockDim(), t, h, w});
}

torch::Tensor ClassicVqCodec::decode(const torch::Tensor& blocks, const torch::Tensor& /*cond*/) {
  const auto& g = m_geometry;
  TORCH_CHECK(blocks.dim() == 5 && blocks.size(1) == g.blockDim(),
              "classic VQ: expected blocks [B, ", g.blockDim(), ", t, h, w], got ", blocks.sizes());
  const std::int64_t b = blocks.size(0), t = blocks.size(2), h = blocks.size(3), w = blocks.size(4);
  const std::int64_t sf = g.space_factor, tf = g.time_factor;
  torch::Tensor video = blocks.reshape({b, g.channels, tf, sf, sf, t, h, w})
                            .permute({0, 1, 5, 2, 6, 3, 7, 4})
                            .reshape({b, g.channels, t * tf, h * sf, w * sf});
  if (g.first_frame_alone) {
    video = torch::cat({video.slice(2, 0, tf).mean(2, true), video.slice(2, tf)}, 2);
  }
  return video;
}

TokenizerStats ClassicVqCodec::stats(std::int64_t frames, std::int64_t image_size) const {
  TokenizerStats s;
  s.input_shape = {m_geometry.channels, frames, image_size, image_size};
  s.token_grid = tokenGrid(frames, image_size);
  return s;
}

// ---- files -----------------------------------------------------------------------------------

bool isCodecFolder(const fs::path& folder) {
  std::error_code ec;
  return fs::is_regular_file(folder / kCodecFile, ec);
}

void saveCodec(const ClassicVqCodec& codec, const fs::path& file,
               const std::map<std::string, std::string>& extra) {
  const BlockGeometry& g = codec.geometry();
  std::map<std::string, std::string> meta = extra;
  meta["format"] = "tokenbench-classic-vq";
  meta["channels"] = std::to_string(g.channels);
  meta["time_factor"] = std::to_string(g.time_factor);
  meta["space_factor"] = std::to_string(g.space_factor);
  meta["first_frame_alone"] = g.first_frame_alone ? "true" : "false";
  auto* q = dynamic_cast<ClassicVqQuantizer*>(codec.quantizer().get());
  weights::saveTensors({{"codebooks", q->codebooks()}}, file, meta);
}

std::shared_ptr<ClassicVqCodec> loadCodec(const fs::path& file) {
  const core::SafetensorsFile st = core::SafetensorsFile::read(file);
  const auto& meta = st.metadata();
  auto field = [&](const std::string& key) {
    const auto it = meta.find(key);
    if (it == meta.end())
      throw std::runtime_error(file.string() + ": no \"" + key + "\" in the metadata");
    return it->second;
  };
  if (field("format") != "tokenbench-classic-vq") {
    throw std::runtime_error(file.string() + ": not a classic VQ codec (format \"" +
                             field("format") + "\")");
  }
  BlockGeometry g;
  try {
    g.channels = std::stoll(field("channels"));
    g.time_factor = std::stoll(field("time_factor"));
    g.space_factor = std::stoll(field("space_factor"));
  } catch (const std::logic_error&) {
    throw std::runtime_error(file.string() +
                             ": the block geometry in the metadata is not a number");
  }
  g.first_frame_alone = field("first_frame_alone") == "true";
  if (g.channels < 1 || g.time_factor < 1 || g.space_factor < 1) {
    throw std::runtime_error(file.string() + ": the block geometry must be positive");
  }
  const core::TensorInfo* info = st.find("codebooks");
  if (info == nullptr) throw std::runtime_error(file.string() + ": no tensor named \"codebooks\"");
  try {
    return std::make_shared<ClassicVqCodec>(g, weights::readTensor(st, *info));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

}  // namespace tb::trainer::baseline
