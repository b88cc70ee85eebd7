// An epoch started at a position of its global order (EpochPosition): the same ranks continue with the
// batches they would have made, bit for bit; another number of ranks shares the rest so that every sample of
// the epoch is visited once, for the sampler's order and for a source's own (tar shards' interleaved orders).
#include "fastloop/core/errors.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/loader/sampler.h"
#include "fastloop/data/sources/shard_order.h"
#include "fastloop/data/transforms/augment.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <map>
#include <numeric>

using namespace fastloop;

namespace {

Dataset memory_dataset(int64_t n) {
  Dataset d;
  d.images = torch::arange(n * 2 * 4 * 4, torch::kLong).remainder(251).to(torch::kUInt8).reshape({n, 2, 4, 4});
  d.labels = torch::arange(n, torch::kLong).remainder(10);
  d.num_classes = 10;
  d.mean.assign(2, 0.5f);
  d.stddev.assign(2, 0.25f);
  return d;
}

// Tar shards' epoch order (shard_order.h) over shards of `shard_sizes` samples, without any bytes: the sampler
// asks a source for its order only.
class OrderedSource : public EncodedImages {
 public:
  explicit OrderedSource(std::vector<int64_t> shard_sizes) : sizes_(std::move(shard_sizes)) {}
  int64_t size() const override { return std::accumulate(sizes_.begin(), sizes_.end(), int64_t{0}); }
  int64_t label(int64_t) const override { return 0; }
  std::string name(int64_t i) const override { return std::to_string(i); }
  std::string_view bytes(int64_t, std::string&) const override { return {}; }
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override {
    return shard_epoch_order(sizes_, {seed, epoch, rank, world_size, 5});
  }

 private:
  std::vector<int64_t> sizes_;
};

Dataset shard_dataset(std::vector<int64_t> shard_sizes) {
  Dataset d;
  d.encoded = std::make_shared<OrderedSource>(std::move(shard_sizes));
  return d;
}

SamplerOptions ranked(int64_t rank, int64_t world) { return SamplerOptions{true, 9, rank, world}; }

// `old` ranks visit `k` samples each of epoch 2, then `fresh` ranks go on from there: how often each sample came.
std::map<int64_t, int> elastic_visits(const Dataset& d, int64_t old, int64_t k, int64_t fresh) {
  std::map<int64_t, int> seen;
  for (int64_t r = 0; r < old; ++r) {
    const auto mine = sampler_epoch_indices(d, 2, ranked(r, old), EpochPosition{});
    for (int64_t j = 0; j < k; ++j) ++seen[mine[static_cast<size_t>(j)]];
  }
  for (int64_t r = 0; r < fresh; ++r)
    for (int64_t i : sampler_epoch_indices(d, 2, ranked(r, fresh), EpochPosition{k * old, old})) ++seen[i];
  return seen;
}

void expect_each_once(const std::map<int64_t, int>& seen, int64_t n) {
  EXPECT_EQ(static_cast<int64_t>(seen.size()), n);
  for (const auto& [sample, count] : seen) EXPECT_EQ(count, 1) << "sample " << sample;
}

LoaderOptions options_of(int64_t workers, int64_t rank = 0, int64_t world = 1) {
  LoaderOptions options;
  options.batch_size = 6;
  options.workers = workers;
  options.prefetch = 2;
  options.drop_last = false;
  options.augment = augment_crop_flip(1);
  options.sampler = SamplerOptions{true, 4, rank, world};
  return options;
}

std::vector<Batch> rest_of(Loader& loader) {
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

}  // namespace

TEST(EpochPosition, TheEpochsStartAndTheSameRanksBatchBoundariesGiveTheOrderAsBefore) {
  for (const Dataset& d : {memory_dataset(100), shard_dataset({7, 9, 12, 30, 5, 20, 17})}) {
    for (int64_t world : {1, 3}) {
      for (int64_t r = 0; r < world; ++r) {
        const auto all = sampler_epoch_indices(d, 1, ranked(r, world));
        EXPECT_EQ(sampler_epoch_indices(d, 1, ranked(r, world), EpochPosition{}), all);
        const auto tail = sampler_epoch_indices(d, 1, ranked(r, world), EpochPosition{12 * world, world});
        EXPECT_EQ(tail, std::vector<int64_t>(all.begin() + 12, all.end()));
      }
    }
  }
}

TEST(EpochPosition, TheGlobalOrderIsEachRanksOrderInterleaved) {
  const Dataset d = shard_dataset({7, 9, 12, 30, 5, 20, 17});  // 100 samples: 34 a rank of 3, 2 padded
  const auto order = sampler_epoch_order(d, 1, ranked(0, 1), 3);
  ASSERT_EQ(order.size(), 102u);
  for (int64_t r = 0; r < 3; ++r) {
    const auto mine = sampler_epoch_indices(d, 1, ranked(r, 3));
    for (size_t j = 0; j < mine.size(); ++j) EXPECT_EQ(order[j * 3 + static_cast<size_t>(r)], mine[j]);
  }
  // A position that is no batch boundary of the same ranks takes the general path: still the same order.
  const auto odd = sampler_epoch_indices(d, 1, ranked(1, 3), EpochPosition{31, 3});
  ASSERT_EQ(odd.size(), 24u);  // ceil((102 - 31) / 3)
  EXPECT_EQ(odd.front(), order[32]);
}

TEST(EpochPosition, AnotherNumberOfRanksVisitsTheRestOnce) {
  // 96 samples: 2 ranks x 12 leave 72 (24 for each of 3); 3 ranks x 8 leave 72 (36 for each of 2).
  for (const Dataset& d : {memory_dataset(96), shard_dataset({10, 14, 6, 30, 20, 16})}) {
    expect_each_once(elastic_visits(d, 2, 12, 3), 96);
    expect_each_once(elastic_visits(d, 3, 8, 2), 96);
    expect_each_once(elastic_visits(d, 4, 5, 4), 96);  // as many ranks as before
  }
}

TEST(EpochPosition, ARestThatDoesNotDivideIsPaddedByWrapping) {
  const Dataset d = memory_dataset(100);
  const auto seen = elastic_visits(d, 2, 10, 3);  // 80 left: 27 each, one sample twice
  EXPECT_EQ(seen.size(), 100u);
  int total = 0;
  for (const auto& [sample, count] : seen) {
    total += count;
    EXPECT_LE(count, 2) << "sample " << sample;
  }
  EXPECT_EQ(total, 101);
}

TEST(EpochPosition, APositionPastTheEndIsAnInputError) {
  const Dataset d = memory_dataset(100);
  EXPECT_TRUE(sampler_epoch_indices(d, 0, ranked(0, 1), EpochPosition{100, 1}).empty());
  EXPECT_THROW(sampler_epoch_indices(d, 0, ranked(0, 1), EpochPosition{101, 1}), InputError);
  EXPECT_THROW(sampler_epoch_indices(d, 0, ranked(0, 3), EpochPosition{101, 2}), InputError);
}

TEST(LoaderState, AStartedPositionGivesTheUninterruptedBatchesForAnyWorkers) {
  const Dataset d = memory_dataset(100);
  Loader whole(d, options_of(0));
  whole.start_epoch(3);
  const auto want = rest_of(whole);
  ASSERT_EQ(want.size(), 17u);
  for (int64_t workers : {0, 1, 2}) {
    for (int64_t k : {1, 8, 16, 17}) {
      Loader first(d, options_of(workers));
      first.start_epoch(3);
      for (int64_t j = 0; j < k; ++j) ASSERT_TRUE(first.next());
      const EpochPosition at = first.position();
      EXPECT_EQ(at.taken, std::min<int64_t>(k * 6, 100));  // the last batch holds 4: the order's end
      EXPECT_EQ(at.order_world_size, 1);
      Loader second(d, options_of(workers));
      second.start_epoch(3, at);
      if (k < 17) {
        EXPECT_EQ(second.next_batch(), k);
        EXPECT_EQ(second.end_batch(), 17);
      }
      const auto got = rest_of(second);
      ASSERT_EQ(static_cast<int64_t>(got.size()), 17 - k);
      for (size_t j = 0; j < got.size(); ++j) {
        EXPECT_EQ(got[j].index, k + static_cast<int64_t>(j));
        EXPECT_TRUE(torch::equal(got[j].images, want[static_cast<size_t>(k) + j].images)) << workers << " " << k;
        EXPECT_TRUE(torch::equal(got[j].labels, want[static_cast<size_t>(k) + j].labels));
      }
    }
  }
}

TEST(LoaderState, RanksAfterAsManyBatchesStandAtOnePositionThatAnotherGroupResumes) {
  const Dataset d = memory_dataset(96);
  EpochPosition at;
  for (int64_t r = 0; r < 2; ++r) {
    Loader loader(d, options_of(1, r, 2));
    loader.start_epoch(5);
    for (int j = 0; j < 3; ++j) ASSERT_TRUE(loader.next());
    if (r > 0) {
      EXPECT_EQ(loader.position().taken, at.taken);
    }
    at = loader.position();
  }
  EXPECT_EQ(at.taken, 36);  // 3 batches of 6 on each of 2 ranks
  EXPECT_EQ(at.order_world_size, 2);
  int64_t rest = 0;
  for (int64_t r = 0; r < 3; ++r) {
    Loader loader(d, options_of(2, r, 3));
    loader.start_epoch(5, at);
    EXPECT_EQ(loader.next_batch(), 2);  // 36 / (6 x 3): the numbers a group of 3 would have reached
    for (const Batch& b : rest_of(loader)) rest += b.labels.size(0);
    EXPECT_EQ(loader.position().order_world_size, 2);
  }
  EXPECT_EQ(rest, 60);  // the 96 - 36 left, 20 for each of 3
}
