// core/stats.h: the one median convention (lower), the spread, and the pair ratio with its noise test.
#include "fastloop/core/stats.h"

#include <gtest/gtest.h>

using fastloop::median;
using fastloop::pair_ratio;

TEST(Stats, MedianIsTheLowerOfTheTwoMiddleValues) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.0) << "one measurement's value, the lower middle";
  EXPECT_DOUBLE_EQ(median({}), 0.0);
  EXPECT_EQ(fastloop::median_index({40.0, 10.0, 30.0, 20.0}), 3u) << "index into the unsorted values";
}

TEST(Stats, SpreadIsMinAndMax) {
  const fastloop::Spread s = fastloop::spread({2.0, 5.0, 1.0});
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
}

TEST(Stats, PairRatioSkipsUnmeasuredPairsAndMarksNoise) {
  const fastloop::PairRatio clear = pair_ratio({210.0, 220.0, 5.0}, {100.0, 100.0, 0.0});
  EXPECT_DOUBLE_EQ(clear.median, 2.1);
  EXPECT_DOUBLE_EQ(clear.max, 2.2);
  EXPECT_FALSE(clear.noisy);
  const fastloop::PairRatio noisy = pair_ratio({100.0, 40.0}, {50.0, 50.0});
  EXPECT_DOUBLE_EQ(noisy.median, 0.8);
  EXPECT_TRUE(noisy.noisy) << "pairs 2.0 and 0.8 disagree more than 0.8 is from 1";
  EXPECT_DOUBLE_EQ(pair_ratio({}, {1.0}).median, 0.0);
}
