// The statistics of stats.h: lower median, spread, pair ratio and its noise test.
#include "fastloop/core/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace fastloop {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

size_t median_index(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  return order[(order.size() - 1) / 2];
}

Spread spread(const std::vector<double>& values) {
  if (values.empty()) return {};
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {*lo, *hi};
}

bool ratio_noisy(double median, double min, double max) { return max - min > std::abs(median - 1.0); }

PairRatio pair_ratio(const std::vector<double>& ours, const std::vector<double>& theirs) {
  std::vector<double> ratios;
  for (size_t i = 0; i < std::min(ours.size(), theirs.size()); ++i)
    if (ours[i] > 0.0 && theirs[i] > 0.0) ratios.push_back(ours[i] / theirs[i]);
  PairRatio r;
  if (ratios.empty()) return r;
  r.median = median(ratios);
  const Spread s = spread(ratios);
  r.min = s.min, r.max = s.max;
  r.noisy = ratio_noisy(r.median, r.min, r.max);
  return r;
}

} // namespace fastloop
