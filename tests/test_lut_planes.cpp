// The output stage's RGB row writer (data/transforms/lut_planes): its AVX2 path and its portable loop give the
// table's own values in each plane, at every width (the vector part and the tail), and write nothing past them.
#include "fastloop/data/transforms/lut_planes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace fastloop;

TEST(LutPlanes, EveryWidthWritesEachPixelsTableValueIntoItsPlane) {
  std::mt19937 rng(7);
  std::vector<float> table(768);
  for (float& v : table) v = std::uniform_real_distribution<float>(-3.0F, 3.0F)(rng);
  for (int64_t width = 0; width <= 41; ++width) {
    std::vector<uint8_t> px(static_cast<size_t>(3 * width));
    for (uint8_t& p : px) p = static_cast<uint8_t>(rng());
    for (const bool portable : {false, true}) {
      const size_t n = static_cast<size_t>(width);
      std::vector<float> planes(3 * n + 3, -100.0F);  // one guard value after each plane
      float* r = planes.data();
      float* g = r + n + 1;
      float* b = g + n + 1;
      (portable ? lut_planes_row_portable : lut_planes_row)(px.data(), width, table.data(), r, g, b);
      for (size_t x = 0; x < n; ++x) {
        ASSERT_EQ(std::memcmp(&r[x], &table[px[3 * x]], 4), 0) << "width " << width << " x " << x;
        ASSERT_EQ(std::memcmp(&g[x], &table[256 + px[3 * x + 1]], 4), 0) << "width " << width << " x " << x;
        ASSERT_EQ(std::memcmp(&b[x], &table[512 + px[3 * x + 2]], 4), 0) << "width " << width << " x " << x;
      }
      EXPECT_EQ(r[n], -100.0F);
      EXPECT_EQ(g[n], -100.0F);
      EXPECT_EQ(b[n], -100.0F);
    }
  }
}
