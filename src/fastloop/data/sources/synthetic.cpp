// Synthetic dataset: per class a template (a base colour per channel plus a sinusoidal stripe pattern of
// class-specific frequency and phase), per image that template plus uniform noise, written in place.
// Colour survives crops and flips, so augmentation does not destroy the signal.
#include "fastloop/data/sources/synthetic.h"

#include "fastloop/data/sources/idx.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace fastloop {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kStripeAmplitude = 40;  // grey levels
constexpr int kNoiseAmplitude = 48;   // grey levels, uniform in [-kNoiseAmplitude, kNoiseAmplitude]

// splitmix64: tiny, fast and fully specified, so the bytes do not depend on LibTorch's generators.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

} // namespace

Dataset synthetic_make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t num_classes, uint64_t seed) {
  TORCH_CHECK(n > 0 && c > 0 && h > 0 && w > 0, "synthetic_make: sizes must be > 0, got n=", n, " c=", c, " h=", h,
              " w=", w);
  TORCH_CHECK(num_classes > 0, "synthetic_make: num_classes must be > 0, got ", num_classes);
  SplitMix64 rng{seed};
  const int64_t plane = h * w, image = c * plane;

  // Templates, rounded once to integers: [num_classes, c, h, w] grey levels.
  std::vector<int16_t> templates(static_cast<size_t>(num_classes * image));
  for (int64_t k = 0; k < num_classes; ++k) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const double base = 48 + 160 * rng.uniform();             // grey levels
      const double fx = static_cast<double>(rng.next() % 4);    // cycles per image width
      const double fy = static_cast<double>(rng.next() % 4);    // cycles per image height
      const double phase = 2 * kPi * rng.uniform();
      int16_t* t = templates.data() + (k * c + ch) * plane;
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          const double v = base + kStripeAmplitude * std::sin(2 * kPi * (fx * x / w + fy * y / h) + phase);
          t[y * w + x] = static_cast<int16_t>(std::lround(v));
        }
      }
    }
  }

  Dataset ds;
  ds.num_classes = num_classes;
  ds.images = at::empty({n, c, h, w}, at::kByte);
  ds.labels = at::empty({n}, at::kLong);
  uint8_t* out = ds.images.data_ptr<uint8_t>();
  int64_t* labels = ds.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(num_classes));
    labels[i] = k;
    const int16_t* t = templates.data() + k * image;
    uint8_t* img = out + i * image;
    uint64_t bits = 0;
    for (int64_t p = 0; p < image; ++p) {
      if (p % 8 == 0) bits = rng.next();  // eight noise bytes per draw
      const int noise = static_cast<int>(bits & 0xFF) * (2 * kNoiseAmplitude + 1) / 256 - kNoiseAmplitude;
      bits >>= 8;
      img[p] = static_cast<uint8_t>(std::clamp(t[p] + noise, 0, 255));
    }
  }
  channel_stats(ds.images, ds.mean, ds.stddev);
  return ds;
}

} // namespace fastloop
