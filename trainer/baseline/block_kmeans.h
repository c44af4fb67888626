#pragma once
// k-means for the classic reference codec: points are the rows of a float matrix, distances come
// from one matrix product per chunk of rows (||x||^2 - 2 x.c + ||c||^2), centroids start from
// k-means++ on a seeded sample and improve by Lloyd iterations. Deterministic for a seed.

#include <torch/torch.h>

#include <cstdint>

namespace tb::trainer::baseline {

struct KMeansOptions {
  std::int64_t clusters = 1024;  ///< k, >= 1
  int iterations = 15;           ///< Lloyd iterations at most (fewer when nothing moves)
  std::uint64_t seed = 0;        ///< the k-means++ draws
  /// k-means++ runs on this many points of a seeded sample (0: 16 k, at most every point).
  std::int64_t init_sample = 0;
};

struct KMeansResult {
  torch::Tensor centroids;  ///< [k, D] float32
  double mean_squared_distance =
      0;               ///< of every point to its nearest centroid, after the last iteration
  int iterations = 0;  ///< Lloyd iterations run
};

/// Index of the nearest centroid (squared Euclidean distance; ties: the lowest index) of every
/// row of `points` [N, D] among `centroids` [k, D], as int64 [N]. When `distances` is given it
/// receives the squared distances, float32 [N]. Computed in chunks of rows; CPU or CUDA.
torch::Tensor nearestCentroid(const torch::Tensor& points, const torch::Tensor& centroids,
                              torch::Tensor* distances = nullptr);

/// Lloyd iterations from `centroids` [k, D]: assign every point to its nearest centroid, move
/// each centroid to the mean of its points (sums in float64); a centroid left without points
/// moves to the point farthest from its own centroid (the farthest unused one for the next). Stops
/// after `iterations` or when no assignment changes. Returns the final centroids.
KMeansResult lloydIterations(const torch::Tensor& points, torch::Tensor centroids, int iterations);

/// k-means++ seeds (Arthur & Vassilvitskii 2007) on a seeded sample of `points` [N, D], then
/// lloydIterations over every point. Throws std::invalid_argument when N < k or the points are
/// not a 2-D float32 matrix.
KMeansResult fitKMeans(const torch::Tensor& points, const KMeansOptions& options);

}  // namespace tb::trainer::baseline
