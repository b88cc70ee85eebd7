// lookup_bytes (data/transforms/functional/lookup.h): the vectorised lookup (where this CPU has VBMI) and the
// byte-at-a-time one give the same bytes as the definition, for 1 to 4 interleaved channels and lengths
// around the 64-byte vector (tails, and the 3-vector phase of 3 channels).
#include "fastloop/data/transforms/functional/lookup.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace fastloop {
namespace {

TEST(Lookup, EveryChannelGoesThroughItsOwnTable) {
  std::mt19937 rng(7);
  std::vector<uint8_t> tables(4 * 256);
  for (auto& t : tables) t = static_cast<uint8_t>(rng());
  for (int64_t channels = 1; channels <= 4; ++channels) {
    for (int64_t pixels : {0, 1, 21, 22, 63, 64, 65, 191, 192, 193, 1000, 50177}) {
      const int64_t n = pixels * channels;
      std::vector<uint8_t> image(static_cast<size_t>(n));
      for (auto& b : image) b = static_cast<uint8_t>(rng());
      std::vector<uint8_t> expected = image;
      for (int64_t i = 0; i < n; ++i) expected[i] = tables[(i % channels) * 256 + image[i]];
      std::vector<uint8_t> fast = image, portable = image;
      lookup_bytes(fast.data(), n, channels, tables.data());
      lookup_bytes_portable(portable.data(), n, channels, tables.data());
      EXPECT_EQ(fast, expected) << channels << " channels, " << pixels << " pixels";
      EXPECT_EQ(portable, expected) << channels << " channels, " << pixels << " pixels";
    }
  }
}

}  // namespace
}  // namespace fastloop
