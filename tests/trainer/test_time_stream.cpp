// Whole videos coded in time chunks (TimeStream): the causal layers carry their state from one
// chunk to the next, so the tokens and the decoded frames equal one pass over the whole video.
#include "trainer/models/magvit_tokenizer.h"
#include "trainer/models/time_stream.h"
#include "trainer/models/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tb::trainer {
namespace {

core::ModelConfig magvitWithEveryTimeLayer(core::TimeAlignment alignment, core::TimePadding pad,
                                           bool separate_first_frame) {
  core::ModelConfig m;
  m.kind = core::ModelKind::Magvit2;
  m.init_dim = 8;
  m.max_dim = 16;
  m.attn_dim_head = 8;
  m.attn_heads = 2;
  m.attn_num_mem_kv = 2;
  m.linear_attn_dim_head = 4;
  m.linear_attn_heads = 2;
  m.ff_mult = 2;
  m.time_alignment = alignment;
  m.time_padding = pad;
  m.separate_first_frame_encoding = separate_first_frame;
  m.input_conv_kernel = {3, 3, 3};
  // Every layer that mixes frames: causal convolutions, both time compressions, causal attention
  // with its token shift, the gate loop.
  m.layers = {{"residual", {}},      {"compress_time", {}},       {"attend_time", {}},
              {"gateloop_time", {}}, {"consecutive_residual", 2}, {"compress_space", {}},
              {"compress_time", {}}, {"linear_attend_space", {}}, {"residual", {}}};
  m.quantizer.codebook_size = 256;
  return m;
}

core::DataConfig frames(int image, int count) {
  core::DataConfig d;
  d.image_size = image;
  d.num_frames = count;
  return d;
}

struct Case {
  core::TimeAlignment alignment;
  core::TimePadding padding;
  bool separate_first_frame;
};

TEST(TimeStream, ChunkedTokensAndFramesEqualOnePass) {
  for (const Case& c : {Case{core::TimeAlignment::Lagged, core::TimePadding::Zeros, false},
                        Case{core::TimeAlignment::Blocks, core::TimePadding::Replicate, true}}) {
    SCOPED_TRACE(std::string(core::choiceName(c.alignment)) + ", " + core::choiceName(c.padding));
    torch::manual_seed(3);
    auto tok = makeTokenizer(
        magvitWithEveryTimeLayer(c.alignment, c.padding, c.separate_first_frame), frames(16, 17));
    tok->eval();
    ASSERT_EQ(tok->timeFactor(), 4);
    ASSERT_TRUE(tok->codesTimeInChunks());
    torch::NoGradGuard no_grad;
    const auto video = torch::rand({1, 3, 1 + 4 * 7, 16, 16}) * 2 - 1;  // 8 latent frames
    const auto whole = tok->tokenize(video);
    ASSERT_EQ(whole.size(1), 8);
    for (std::int64_t chunk : {1, 2, 3}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk));
      const auto chunked = tok->tokenizeVideo(video, chunk);
      EXPECT_TRUE(torch::equal(chunked, whole)) << (chunked != whole).sum().item<std::int64_t>()
                                                << " of " << whole.numel() << " tokens differ";
      const auto decoded = tok->decodeVideo(whole, chunk);
      const auto reference = tok->decodeFromIndices(whole);
      ASSERT_EQ(decoded.sizes(), reference.sizes());
      EXPECT_LE((decoded - reference).abs().max().item<double>(), 1e-4);
    }
    // The latents themselves, not only their signs.
    const auto reference = tok->encode(video);
    torch::Tensor latents;
    {
      TimeStreamScope stream;
      const auto a = tok->encode(video.narrow(2, 0, 9));
      const auto b = tok->encode(video.narrow(2, 9, 20));
      latents = torch::cat({a, b}, 2);
    }
    EXPECT_LE((latents - reference).abs().max().item<double>(), 1e-4);
  }
}

TEST(TimeStream, WithoutAScopeLayersRunAsBefore) {
  EXPECT_EQ(TimeStream::active(), nullptr);
  {
    TimeStreamScope outer;
    TimeStream* first = TimeStream::active();
    ASSERT_NE(first, nullptr);
    {
      TimeStreamScope inner;
      EXPECT_NE(TimeStream::active(), first);
    }
    EXPECT_EQ(TimeStream::active(), first);
  }
  EXPECT_EQ(TimeStream::active(), nullptr);
  // A continuing chunk must be whole latent frames.
  auto tok = makeTokenizer(
      magvitWithEveryTimeLayer(core::TimeAlignment::Lagged, core::TimePadding::Zeros, false),
      frames(16, 17));
  torch::NoGradGuard no_grad;
  TimeStreamScope stream;
  tok->encode(torch::zeros({1, 3, 5, 16, 16}));
  EXPECT_THROW(tok->encode(torch::zeros({1, 3, 5, 16, 16})), c10::Error);
}

TEST(TimeStream, VqganCodesAnyChunkFrameByFrame) {
  core::ModelConfig m;
  m.kind = core::ModelKind::Vqgan;
  m.vqgan.base_channels = 8;
  m.vqgan.channel_mult = {1, 2};
  m.vqgan.num_res_blocks = 1;
  m.vqgan.attn_resolutions = {8};
  m.vqgan.z_channels = 8;
  m.quantizer.type = core::QuantizerType::Vq;
  m.quantizer.codebook_size = 32;
  m.quantizer.codebook_dim = 4;
  torch::manual_seed(1);
  auto tok = makeTokenizer(m, frames(16, 5));
  tok->eval();
  torch::NoGradGuard no_grad;
  const auto video = torch::rand({1, 3, 7, 16, 16}) * 2 - 1;
  EXPECT_EQ(tok->timeFactor(), 1);
  EXPECT_TRUE(torch::equal(tok->tokenizeVideo(video, 3), tok->tokenize(video)));
}

}  // namespace
}  // namespace tb::trainer
