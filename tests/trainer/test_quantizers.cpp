// LFQ, FSQ and VQ: index <-> code round trips, entropy terms, EMA and dead-code restarts.
#include "trainer/models/finite_scalar_quantizer.h"
#include "trainer/models/lookup_free_quantizer.h"
#include "trainer/models/vector_quantizer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tb::trainer {
namespace {

// The reference formulas without the log clamp: [N, C, 2^K] softmax over all codes.
std::pair<double, double> directEntropies(const torch::Tensor& x, double inv_temperature,
                                          double scale) {
  const std::int64_t k = x.size(2);
  const auto all = torch::arange(std::int64_t{1} << k).unsqueeze(-1);
  const auto mask = torch::pow(2, torch::arange(k - 1, -1, -1));
  const auto codes = (torch::bitwise_and(all, mask).ne(0).to(torch::kDouble) * 2 - 1) * scale;
  const auto logits = torch::matmul(x.to(torch::kDouble), codes.t()) * (2 * inv_temperature);
  const auto p = torch::softmax(logits, -1);
  const auto plogp = torch::where(p > 0, p * p.log(), torch::zeros_like(p));
  const double per_sample = (-plogp.sum(-1)).mean().item<double>();
  const auto avg = p.mean(0);
  const auto alogp = torch::where(avg > 0, avg * avg.log(), torch::zeros_like(avg));
  return {per_sample, (-alogp.sum(-1)).mean().item<double>()};
}

TEST(LookupFreeQuantizer, IndexCodeRoundTripOneAndSeveralCodebooks) {
  torch::manual_seed(0);
  for (std::int64_t books : {1, 2}) {
    for (bool spherical : {false, true}) {
      SCOPED_TRACE(std::to_string(books) + (spherical ? " spherical" : ""));
      LookupFreeQuantizer q(
          LookupFreeQuantizerOptions(12, 64).num_codebooks(books).spherical(spherical));
      q->eval();
      const auto z = torch::randn({2, 12, 3, 4, 4});
      const auto out = q->quantize(z);
      std::vector<std::int64_t> shape{2, 3, 4, 4};
      if (books > 1) shape.push_back(books);
      EXPECT_EQ(out.indices.sizes(), shape);
      EXPECT_EQ(out.indices.scalar_type(), torch::kLong);
      EXPECT_GE(out.indices.min().item<std::int64_t>(), 0);
      EXPECT_LT(out.indices.max().item<std::int64_t>(), 64);
      EXPECT_TRUE(torch::allclose(q->indicesToCodes(out.indices), out.quantized, 1e-6, 1e-6));
    }
  }
}

TEST(LookupFreeQuantizer, BitsAreSignsMostSignificantFirst) {
  LookupFreeQuantizer q(LookupFreeQuantizerOptions(3, 8));  // no projection when dim == K
  q->eval();
  const auto z = torch::tensor({0.5f, -0.2f, 0.1f}).view({1, 3, 1});
  const auto out = q->quantize(z);
  EXPECT_EQ(out.indices.item<std::int64_t>(), 0b101);
  EXPECT_TRUE(torch::equal(out.quantized.flatten(), torch::tensor({1.0f, -1.0f, 1.0f})));
  EXPECT_DOUBLE_EQ(q->bitsPerToken(), 3.0);
}

TEST(LookupFreeQuantizer, EntropyTermsEqualTheDirectFormulaForSmallK) {
  torch::manual_seed(0);
  LookupFreeQuantizer q(LookupFreeQuantizerOptions(6, 64).entropy_estimate(EntropyEstimate::Exact));
  const auto x = torch::randn({512, 1, 6}) * 0.01;  // logits of order 1 at inv_temperature 100
  const auto [per_sample, codebook] = q->entropyTerms(x);
  const auto [ref_ps, ref_cb] = directEntropies(x, 100.0, 1.0);
  EXPECT_NEAR(per_sample.item<double>(), ref_ps, 1e-4 * ref_ps);
  EXPECT_NEAR(codebook.item<double>(), ref_cb, 1e-4 * ref_cb);
  // The reference's clamped-log formula agrees to the clamp's effect.
  const auto [clamped_ps, clamped_cb] = q->entropyTermsReference(x);
  EXPECT_NEAR(per_sample.item<double>(), clamped_ps.item<double>(), 1e-3 * ref_ps);
  EXPECT_NEAR(codebook.item<double>(), clamped_cb.item<double>(), 1e-5);
}

// A data-parallel run gives the quantizer the all-reduce over its ranks: with it, one half of a
// batch computes the codebook entropy of the whole batch. The reducer belongs to that quantizer
// only; another one in the same process keeps its local statistics.
TEST(LookupFreeQuantizer, ABatchMeanReducerMakesTheCodebookEntropyCoverTheGlobalBatch) {
  torch::manual_seed(0);
  const auto options = LookupFreeQuantizerOptions(6, 64).entropy_estimate(EntropyEstimate::Exact);
  LookupFreeQuantizer q(options);
  LookupFreeQuantizer other(options);
  const auto a = torch::randn({256, 1, 6}) * 0.01;
  const auto b = torch::randn({256, 1, 6}) * 0.01 + 0.005;  // another rank's half, other codes
  const auto whole = q->entropyTerms(torch::cat({a, b})).second.item<double>();
  const auto alone = q->entropyTerms(a).second.item<double>();
  ASSERT_GT(std::abs(whole - alone), 1e-3) << "the halves' statistics should differ";

  torch::Tensor mean_b;  // what "rank 1" contributes: its mean code probabilities
  q->setBatchMeanReducer([&](const torch::Tensor& m) { return mean_b = m.detach(); });
  (void)q->entropyTerms(b);
  q->setBatchMeanReducer([&](const torch::Tensor& m) { return (m + mean_b) / 2; });
  EXPECT_NEAR(q->entropyTerms(a).second.item<double>(), whole, 1e-5);
  EXPECT_NEAR(other->entropyTerms(a).second.item<double>(), alone, 1e-9);
  q->eval();  // validation statistics stay local
  EXPECT_NEAR(q->entropyTerms(a).second.item<double>(), alone, 1e-9);
}

TEST(LookupFreeQuantizer, FactorizedCodebookEntropyBoundsAndApproachesExact) {
  torch::manual_seed(0);
  LookupFreeQuantizer q(LookupFreeQuantizerOptions(8, 256).max_group_bits(4));
  const auto x = torch::randn({4096, 1, 8}) * 0.01;  // independent bits
  const auto exact = q->entropyTerms(x, EntropyEstimate::Exact);
  const auto fact = q->entropyTerms(x, EntropyEstimate::Factorized);
  EXPECT_DOUBLE_EQ(exact.first.item<double>(), fact.first.item<double>());  // per-sample: same path
  const double e = exact.second.item<double>(), f = fact.second.item<double>();
  EXPECT_GE(f, e - 1e-5);        // subadditivity: an upper bound
  EXPECT_NEAR(f, e, 0.005 * e);  // stated tolerance for independent bits: 0.5 %
  // Correlated bits (bit 4..7 copy bit 0..3): the bound is loose, as documented.
  const auto half = torch::randn({4096, 1, 4}) * 0.01;
  const auto corr = torch::cat({half, half}, -1);
  EXPECT_GT(q->entropyTerms(corr, EntropyEstimate::Factorized).second.item<double>(),
            q->entropyTerms(corr, EntropyEstimate::Exact).second.item<double>() + 0.5);
}

TEST(LookupFreeQuantizer, EighteenBitsTrainWithFactorizedEntropy) {
  torch::manual_seed(0);
  LookupFreeQuantizer q(LookupFreeQuantizerOptions(32, 1 << 18).entropy_loss_weight(0.1));
  q->train();
  const auto z = torch::randn({2, 32, 1, 16, 16}, torch::requires_grad());
  const auto out = q->quantize(z);
  ASSERT_EQ(out.terms.size(), 3u);
  EXPECT_EQ(out.terms[1].first, "codebook_entropy");
  const double cb = out.terms[1].second.item<double>();
  EXPECT_GT(cb, 0.0);
  EXPECT_LE(cb, 18 * std::log(2.0) + 1e-4);
  out.loss.backward();
  EXPECT_GT(z.grad().abs().sum().item<double>(), 0.0);
}

TEST(LookupFreeQuantizer, TrainingLossCombinesTermsAndGradientsPassStraightThrough) {
  torch::manual_seed(0);
  LookupFreeQuantizer q(LookupFreeQuantizerOptions(4, 16)
                            .entropy_loss_weight(0.5)
                            .commitment_loss_weight(2.0)
                            .diversity_gamma(1.5));
  q->train();
  const auto z = torch::randn({1, 4, 2, 3, 3}, torch::requires_grad());
  const auto out = q->quantize(z);
  const double ps = out.terms[0].second.item<double>(), cb = out.terms[1].second.item<double>();
  const double commit = out.terms[2].second.item<double>();
  EXPECT_NEAR(out.loss.item<double>(), 0.5 * (ps - 1.5 * cb) + 2.0 * commit, 1e-5);
  out.quantized.sum().backward();
  EXPECT_TRUE(
      torch::allclose(z.grad(), torch::ones_like(z)));  // identity straight-through, no projection
}

TEST(LookupFreeQuantizer, OptionsAreValidatedWithFieldNames) {
  try {
    LookupFreeQuantizer q(LookupFreeQuantizerOptions(4, 1000));
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("codebook_size"), std::string::npos);
  }
  core::QuantizerConfig c;
  c.codebook_size = 1000;
  try {
    makeQuantizer(c, 8);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("model.quantizer.codebook_size", 0), 0u) << e.what();
  }
}

TEST(FiniteScalarQuantizer, IndexCodeRoundTripAndRange) {
  torch::manual_seed(0);
  FiniteScalarQuantizer q(FiniteScalarQuantizerOptions(6, {8, 5, 5, 5}));
  q->eval();
  EXPECT_EQ(q->codebookSize(), 1000);
  const auto z = torch::randn({2, 6, 3, 5}) * 3;
  const auto out = q->quantize(z);
  EXPECT_EQ(out.indices.sizes(), (std::vector<std::int64_t>{2, 3, 5}));
  EXPECT_GE(out.indices.min().item<std::int64_t>(), 0);
  EXPECT_LT(out.indices.max().item<std::int64_t>(), 1000);
  EXPECT_TRUE(torch::allclose(q->indicesToCodes(out.indices), out.quantized, 1e-5, 1e-6));
  // Every index maps to a distinct code.
  FiniteScalarQuantizer direct(FiniteScalarQuantizerOptions(3, {3, 4, 2}));
  const auto codes = direct->indicesToCodes(torch::arange(24).view({1, 24}));
  EXPECT_EQ(std::get<0>(torch::unique_dim(codes.squeeze(0).t(), 0)).size(0), 24);
  EXPECT_LE(codes.abs().max().item<float>(), 1.0f);
}

// "level_entropy" is 1 when a channel's values sit on its levels equally often, falls as they
// crowd onto fewer, covers the global batch with a reducer, and its loss spreads the codes.
TEST(FiniteScalarQuantizer, LevelEntropyMeasuresAndSpreadsTheUseOfLevels) {
  torch::manual_seed(0);
  FiniteScalarQuantizer q(FiniteScalarQuantizerOptions(1, {5}).entropy_loss_weight(1.0));
  q->train();
  // Arguments of tanh that land exactly on the levels -2..2 (half width 2 x 1.001).
  const auto on_levels = torch::atanh(torch::arange(-2, 3).to(torch::kFloat) / 2.002);
  const auto even = on_levels.repeat({40}).view({1, 1, 200});
  const auto term = [&](const torch::Tensor& z) {
    const auto out = q->quantize(z);
    EXPECT_EQ(out.terms[1].first, "level_entropy");
    return out.terms[1].second.item<double>();
  };
  EXPECT_NEAR(term(even), 1.0, 1e-3);
  const auto crowded =
      torch::cat({on_levels.slice(0, 1, 3).repeat({90}), on_levels.slice(0, 0, 1).repeat({20})})
          .view({1, 1, 200});  // levels -1 and 0 90 times each, -2 20 times
  const double p1 = 0.45, p2 = 0.1;
  const double expected = -(2 * p1 * std::log(p1) + p2 * std::log(p2)) / std::log(5.0);
  // The soft assignment gives a value on a level's neighbours e^-4 of its weight each: slightly
  // more than the hard counts' entropy.
  EXPECT_NEAR(term(crowded), expected, 0.05);

  // With the reducer, one half of a batch sees the entropy of the whole.
  const auto half_a = on_levels.slice(0, 0, 2).repeat({50}).view({1, 1, 100});
  const auto half_b = on_levels.slice(0, 2, 5).repeat({34}).slice(0, 0, 100).view({1, 1, 100});
  const double whole = term(torch::cat({half_a, half_b}, 2));
  ASSERT_GT(whole - term(half_a), 0.1) << "the halves' levels should differ";
  torch::Tensor mean_b;
  q->setBatchMeanReducer([&](const torch::Tensor& m) { return mean_b = m.detach(); });
  (void)term(half_b);
  q->setBatchMeanReducer([&](const torch::Tensor& m) { return (m + mean_b) / 2; });
  EXPECT_NEAR(term(half_a), whole, 1e-5);
  q->setBatchMeanReducer(nullptr);

  // Gradient descent on the loss alone moves values crowded on one level onto all five.
  auto z = (torch::randn({1, 1, 256}) * 0.05).requires_grad_();
  torch::optim::Adam adam({z}, torch::optim::AdamOptions(0.05));
  const auto distinct = [&] {
    torch::NoGradGuard no_grad;
    return std::get<0>(torch::_unique(q->quantize(z).indices)).numel();
  };
  EXPECT_EQ(distinct(), 1);
  for (int step = 0; step < 200; ++step) {
    adam.zero_grad();
    q->quantize(z).loss.backward();
    adam.step();
  }
  EXPECT_EQ(distinct(), 5);
  EXPECT_GT(term(z.detach()), 0.9);
  q->eval();
  EXPECT_EQ(q->quantize(z).terms[1].second.item<double>(), 0.0);  // training only
}

TEST(VectorQuantizer, NearestCodeRoundTripAndLosses) {
  torch::manual_seed(0);
  VectorQuantizer q(VectorQuantizerOptions(4, 16, 4).dead_code_threshold(0).beta(0.25));
  const auto z = torch::randn({2, 4, 3, 3});
  q->eval();
  const auto out = q->quantize(z);
  EXPECT_TRUE(torch::allclose(q->indicesToCodes(out.indices), out.quantized, 1e-6, 1e-6));
  const auto flat = z.permute({0, 2, 3, 1}).reshape({-1, 4});
  const auto expected = torch::cdist(flat, q->embedding->weight).argmin(1);
  EXPECT_TRUE(torch::equal(out.indices.flatten(), expected));
  EXPECT_NEAR(out.loss.item<double>(),
              out.terms[0].second.item<double>() + 0.25 * out.terms[1].second.item<double>(), 1e-6);
}

TEST(VectorQuantizer, DeadCodesRestartFromEncoderOutputs) {
  torch::manual_seed(0);
  VectorQuantizer q(VectorQuantizerOptions(4, 8, 4).dead_code_threshold(1).restart_window(2));
  q->train();
  const auto z = torch::full({1, 4, 2, 2}, 3.0);  // every token picks the same code
  const auto before = q->embedding->weight.clone();
  q->quantize(z);
  EXPECT_EQ(q->restartedCodes(), 0);  // window not complete yet
  q->quantize(z);
  EXPECT_EQ(q->restartedCodes(), 7);
  const auto w = q->embedding->weight;
  std::int64_t replaced = 0;
  for (std::int64_t i = 0; i < 8; ++i)
    if (torch::allclose(w[i], torch::full({4}, 3.0))) ++replaced;
  EXPECT_EQ(replaced, 7);
  EXPECT_FALSE(torch::equal(before, w));
}

TEST(VectorQuantizer, EmaMovesCodesTowardsInputsAndL2NormalisesThem) {
  torch::manual_seed(0);
  VectorQuantizer q(VectorQuantizerOptions(4, 4, 4)
                        .ema(true)
                        .ema_decay(0.5)
                        .l2_normalize(true)
                        .dead_code_threshold(0));
  q->train();
  const auto target = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f});
  const auto z = target.view({1, 4, 1}).expand({1, 4, 8}).contiguous();
  for (int i = 0; i < 20; ++i) q->quantize(z);
  q->eval();
  const auto out = q->quantize(z);
  EXPECT_EQ(out.terms[0].second.item<double>(), 0.0);  // no codebook gradient term with EMA
  const auto code = q->indicesToCodes(out.indices).select(2, 0).flatten();
  EXPECT_TRUE(torch::allclose(code, target, 1e-3, 1e-3)) << code;
  EXPECT_NEAR(q->embedding->weight.norm(2, 1).max().item<double>(), 1.0, 1e-4);
}

}  // namespace
}  // namespace tb::trainer
