// horizontal_flip_u8 (data/transforms/functional/flip.h) against the definition, for every channel count and
// every width from 1 to 40 (the shuffled steps of 5 RGB or 16 grey pixels and their tails), and twice = itself.
#include "fastloop/data/transforms/functional/flip.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace fastloop {
namespace {

TEST(Flip, HorizontalFlipMirrorsEveryRowAtEveryWidth) {
  std::mt19937 rng(3);
  for (int64_t channels = 1; channels <= 4; ++channels) {
    for (int64_t width = 1; width <= 40; ++width) {
      ImageU8 image;
      image.reshape(3, width, channels);
      for (int64_t i = 0; i < image.bytes(); ++i) image.data()[i] = static_cast<uint8_t>(rng());
      const ImageU8 original = image;
      horizontal_flip_u8(image);
      for (int64_t y = 0; y < 3; ++y)
        for (int64_t x = 0; x < width; ++x)
          for (int64_t c = 0; c < channels; ++c)
            ASSERT_EQ(image.row(y)[x * channels + c], original.row(y)[(width - 1 - x) * channels + c])
                << channels << " channels, width " << width << ", pixel " << x;
      horizontal_flip_u8(image);
      EXPECT_EQ(std::vector<uint8_t>(image.data(), image.data() + image.bytes()),
                std::vector<uint8_t>(original.data(), original.data() + original.bytes()));
    }
  }
}

}  // namespace
}  // namespace fastloop
