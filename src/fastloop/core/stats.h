// Statistics of repeated measurements, one convention for all of fastloop (bench, tune, env's GEMM
// probe, the device probe): the median, the spread, the ratio of interleaved pairs and its noise test.
#pragma once

#include <cstddef>
#include <vector>

namespace fastloop {

/// The lower median: the middle value, or the lower of the two middle ones; 0 for none. Not the mean of
/// the two, so a reported median is always one measurement's value (and the time split beside a cell's
/// images/s belongs to the same repetition); the lower one because the bench's committed results and
/// pair ratios already used it. With the odd counts most callers take (5 GEMM runs, 3 repetitions)
/// every convention agrees.
double median(std::vector<double> values);
/// Index of the lower median in `values` (unsorted); values must not be empty.
size_t median_index(const std::vector<double>& values);

/// Smallest and largest value; both 0 for none.
struct Spread {
  double min = 0.0, max = 0.0;
};
Spread spread(const std::vector<double>& values);

/// ours[i] ÷ theirs[i] over pairs of interleaved repetitions (A B A B in one time window).
struct PairRatio {
  double median = 0.0;                // lower median over the pairs; 0: not measured
  double min = 0.0, max = 0.0;        // over the pairs
  bool noisy = false;                 // see ratio_noisy()
};
/// Over the pairs both sides measured (a value ≤ 0 is not a measurement).
PairRatio pair_ratio(const std::vector<double>& ours, const std::vector<double>& theirs);
/// The pairs spread wider (max − min) than the median's distance from 1: the machine's noise is larger
/// than the effect, so read no effect into it.
bool ratio_noisy(double median, double min, double max);

} // namespace fastloop
