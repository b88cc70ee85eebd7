// The synthetic photo-like test images of the colour tests (test_transforms_color*.cpp): smooth gradients,
// a flat patch, saturated corners and noise, in the shapes those tests sweep (odd sizes, grey).
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace fastloop::test {

/// A photo-like image: smooth gradients, a flat patch, saturated corners and noise.
inline ImageU8 color_test_image(int64_t h, int64_t w, int64_t c, uint32_t seed) {
  ImageU8 image;
  image.reshape(h, w, c);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> noise(-12, 12);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) {
        double v = 128 + 100 * std::sin(0.05 * (x + 1) * (k + 1) + 0.03 * y) + noise(rng);
        if (x < w / 8 && y < h / 8) v = 90 + 10 * k;        // flat patch
        if (x > w - w / 10 && y > h - h / 10) v = 255 * (k % 2);  // saturated corner
        image.row(y)[x * c + k] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
      }
  return image;
}

struct ColorShape {
  int64_t h, w, c;
};
inline constexpr ColorShape kColorShapes[] = {{37, 53, 3}, {64, 48, 3}, {120, 200, 3}, {31, 29, 1}};

} // namespace fastloop::test
