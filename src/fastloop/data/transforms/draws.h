// A stream of uniform random draws for one sample, started from hash_mix(seed ^ salt, epoch, index), so
// every loader thread (and the device-resident mode) draws the same values for the same sample. Shared by
// the augmentations that follow torchvision's parameter sampling: RandomResizedCrop and RandomErasing.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

namespace fastloop {

/// splitmix64 over a per-sample start.
class Draws {
 public:
  explicit Draws(uint64_t start) : state_(start) {}
  uint64_t next() {
    uint64_t x = (state_ += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  /// Uniform in [lo, hi), 53 random bits.
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

/// Python 3's round(): ties to even, as torchvision's int(round(...)).
inline int64_t py_round(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

/// One try of torchvision's box sampling (RandomResizedCrop and RandomErasing alike): a target area of
/// `area` * U(scale_min, scale_max) pixels and an aspect ratio exp(U(log ratio_min, log ratio_max)), drawn in
/// that order; returns {round(sqrt(target * ratio)), round(sqrt(target / ratio))} (RandomResizedCrop reads
/// them as width, height; RandomErasing as height, width).
inline std::pair<int64_t, int64_t> box_sides_draw(Draws& draws, double area, double scale_min, double scale_max,
                                                  double ratio_min, double ratio_max) {
  const double target = area * draws.uniform(scale_min, scale_max);
  const double ratio = std::exp(draws.uniform(std::log(ratio_min), std::log(ratio_max)));
  return {py_round(std::sqrt(target * ratio)), py_round(std::sqrt(target / ratio))};
}

} // namespace fastloop
