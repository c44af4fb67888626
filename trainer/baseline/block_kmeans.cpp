#include "trainer/baseline/block_kmeans.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tb::trainer::baseline {
namespace {

// Rows per distance matrix: its [rows, k] floats stay near 128 MiB whatever k is.
std::int64_t chunkRows(std::int64_t clusters) {
  return std::clamp<std::int64_t>((std::int64_t{1} << 25) / std::max<std::int64_t>(clusters, 1),
                                  256, 65536);
}

void checkPoints(const torch::Tensor& points) {
  if (points.dim() != 2 || points.scalar_type() != torch::kFloat32) {
    throw std::invalid_argument("k-means: points must be a float32 matrix [N, D]");
  }
}

// Candidates a greedy k-means++ step draws for k seeds.
int seedCandidates(std::int64_t k) {
  return 2 + static_cast<int>(std::log(static_cast<double>(k)));
}

// Greedy k-means++ on `sample` [S, D] (Arthur & Vassilvitskii's seeding with scikit-learn's
// 2 + ln k candidates a step): each step draws candidates with probability proportional to their
// squared distance from the seeds so far and keeps the one that lowers the total the most; plain
// k-means++ (one draw) left one of 16 blobs without a seed for 3 of the 4 seeds tried.
// Uniform draws when every point already is a seed.
torch::Tensor kmeansPlusPlus(const torch::Tensor& sample, std::int64_t k, std::mt19937_64& rng) {
  const std::int64_t s = sample.size(0);
  const int candidates = seedCandidates(k);
  std::vector<std::int64_t> chosen;
  chosen.reserve(static_cast<std::size_t>(k));
  chosen.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s)));
  torch::Tensor d2 = (sample - sample[chosen.back()]).pow(2).sum(1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  while (static_cast<std::int64_t>(chosen.size()) < k) {
    const torch::Tensor cumulative = d2.to(torch::kFloat64).cumsum(0);
    const double total = cumulative[s - 1].item<double>();
    std::vector<std::int64_t> drawn;
    for (int c = 0; c < candidates; ++c) {
      std::int64_t next;
      if (total > 0) {
        const double* cum = cumulative.data_ptr<double>();
        next = std::upper_bound(cum, cum + s, unit(rng) * total) - cum;
        next = std::min(next, s - 1);
      } else {
        next = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s));
      }
      drawn.push_back(next);
    }
    // [candidates, S]: each candidate's distances, then the seeds' distances if it joined them.
    const torch::Tensor rows = sample.index_select(0, torch::tensor(drawn, torch::kInt64));
    const torch::Tensor joined =
        torch::minimum(d2.unsqueeze(0), (sample.unsqueeze(0) - rows.unsqueeze(1)).pow(2).sum(2));
    const std::int64_t best = joined.to(torch::kFloat64).sum(1).argmin().item<std::int64_t>();
    chosen.push_back(drawn[static_cast<std::size_t>(best)]);
    d2 = joined[best];
  }
  return sample.index_select(0, torch::tensor(chosen, torch::kInt64)).clone();
}

}  // namespace

torch::Tensor nearestCentroid(const torch::Tensor& points, const torch::Tensor& centroids,
                              torch::Tensor* distances) {
  const std::int64_t n = points.size(0);
  const std::int64_t rows = chunkRows(centroids.size(0));
  const torch::Tensor c2 = centroids.pow(2).sum(1);
  const torch::Tensor ct = centroids.t();
  torch::Tensor index = torch::empty({n}, points.options().dtype(torch::kInt64));
  torch::Tensor best;
  if (distances != nullptr) best = torch::empty({n}, points.options());
  for (std::int64_t start = 0; start < n; start += rows) {
    const std::int64_t end = std::min(n, start + rows);
    const torch::Tensor x = points.slice(0, start, end);
    // ||x - c||^2 = ||x||^2 - 2 x.c + ||c||^2; ||x||^2 does not change which c is nearest.
    const torch::Tensor d = torch::addmm(c2.unsqueeze(0), x, ct, 1.0, -2.0);
    const auto [value, arg] = d.min(1);
    index.slice(0, start, end).copy_(arg);
    if (distances != nullptr)
      best.slice(0, start, end).copy_((value + x.pow(2).sum(1)).clamp_min(0));
  }
  if (distances != nullptr) *distances = best;
  return index;
}

KMeansResult lloydIterations(const torch::Tensor& points, torch::Tensor centroids, int iterations) {
  checkPoints(points);
  const std::int64_t k = centroids.size(0), d = centroids.size(1), n = points.size(0);
  const std::int64_t rows = chunkRows(k);
  KMeansResult result;
  torch::Tensor previous;
  torch::Tensor dist;
  torch::Tensor assign = nearestCentroid(points, centroids, &dist);
  for (int it = 0; it < iterations; ++it) {
    if (previous.defined() && torch::equal(assign, previous)) break;
    torch::Tensor sums = torch::zeros({k, d}, points.options().dtype(torch::kFloat64));
    for (std::int64_t start = 0; start < n; start += rows) {
      const std::int64_t end = std::min(n, start + rows);
      sums.index_add_(0, assign.slice(0, start, end),
                      points.slice(0, start, end).to(torch::kFloat64));
    }
    const torch::Tensor counts = torch::bincount(assign, {}, k);
    torch::Tensor moved =
        (sums / counts.clamp_min(1).unsqueeze(1).to(torch::kFloat64)).to(torch::kFloat32);
    // Empty clusters take the points worst served so far, the farthest first.
    const torch::Tensor empty = (counts == 0).nonzero().reshape({-1}).cpu();
    if (empty.numel() > 0) {
      const torch::Tensor farthest =
          std::get<1>(dist.topk(std::min<std::int64_t>(empty.numel(), n)));
      moved.index_copy_(0, empty.slice(0, 0, farthest.numel()).to(moved.device()),
                        points.index_select(0, farthest));
    }
    centroids = moved;
    previous = assign;
    assign = nearestCentroid(points, centroids, &dist);
    ++result.iterations;
  }
  result.centroids = centroids;
  result.mean_squared_distance = dist.to(torch::kFloat64).mean().item<double>();
  return result;
}

KMeansResult fitKMeans(const torch::Tensor& points, const KMeansOptions& options) {
  checkPoints(points);
  const std::int64_t n = points.size(0), k = options.clusters;
  if (k < 1) throw std::invalid_argument("k-means: clusters must be >= 1");
  if (n < k) {
    throw std::invalid_argument("k-means: " + std::to_string(n) + " points for " +
                                std::to_string(k) +
                                " clusters; it needs at least as many points as clusters");
  }
  std::mt19937_64 rng(options.seed);
  const std::int64_t wanted = options.init_sample > 0 ? options.init_sample : 16 * k;
  const std::int64_t s = std::min(n, std::max(wanted, k));
  // A seeded sample without repeats: the first s entries of a partial Fisher-Yates shuffle.
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (std::int64_t i = 0; i < s; ++i) {
    const auto j = i + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - i));
    std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
  }
  order.resize(static_cast<std::size_t>(s));
  const torch::Tensor sample =
      points.index_select(0, torch::tensor(order, torch::kInt64).to(points.device())).contiguous();
  // k-means++ costs k x candidates passes over the sample; past a few billion multiply-adds the
  // seeds are simply the sample's first k points (already a seeded random choice).
  const double work = static_cast<double>(seedCandidates(k)) * static_cast<double>(k) *
                      static_cast<double>(s) * static_cast<double>(points.size(1));
  const torch::Tensor seeds =
      work <= 4e9 ? kmeansPlusPlus(sample, k, rng) : sample.slice(0, 0, k).clone();
  return lloydIterations(points, seeds, options.iterations);
}

}  // namespace tb::trainer::baseline
