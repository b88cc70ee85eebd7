// Seeded per-epoch shuffling and rank sharding of sample indices, and an epoch's global order that the
// ranks of a resumed epoch (as many as before, or another number) share from a position on.
#include "fastloop/data/loader/sampler.h"

#include "fastloop/core/errors.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>
#include <string>

namespace fastloop {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// All `dataset_size` indices, shuffled from (seed, epoch) when options.shuffle.
std::vector<int64_t> shuffled(int64_t dataset_size, int64_t epoch, const SamplerOptions& options) {
  std::vector<int64_t> all(static_cast<size_t>(dataset_size));
  std::iota(all.begin(), all.end(), int64_t{0});
  if (options.shuffle) {
    std::mt19937_64 rng(hash_mix(options.seed, static_cast<uint64_t>(epoch), 0x5eed));
    for (size_t i = all.size(); i > 1; --i) {  // Fisher-Yates; std::shuffle's order is unspecified
      std::swap(all[i - 1], all[static_cast<size_t>(rng() % i)]);
    }
  }
  return all;
}

int64_t world_of(const EpochPosition& start, const SamplerOptions& options) {
  return start.order_world_size > 0 ? start.order_world_size : options.world_size;
}
}  // namespace

uint64_t hash_mix(uint64_t a, uint64_t b, uint64_t c) {
  return splitmix64(splitmix64(splitmix64(a) ^ b) ^ c);
}

std::vector<int64_t> sampler_epoch_indices(int64_t dataset_size, int64_t epoch, const SamplerOptions& options) {
  const std::vector<int64_t> all = shuffled(dataset_size, epoch, options);
  const int64_t world = options.world_size;
  const int64_t per_rank = (dataset_size + world - 1) / world;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per_rank));
  for (int64_t k = options.rank; k < per_rank * world; k += world) {
    mine.push_back(all[static_cast<size_t>(k % dataset_size)]);  // wrap to pad the last round
  }
  return mine;
}

namespace {
// The rank's order when the source imposes one (tar shards, shuffled), else nullopt: the sampler's.
std::optional<std::vector<int64_t>> source_order(const Dataset& dataset, int64_t epoch, const SamplerOptions& options) {
  if (!dataset.encoded || !options.shuffle) return std::nullopt;
  auto order = dataset.encoded->epoch_order(options.seed, epoch, options.rank, options.world_size);
  if (order) {
    const int64_t per_rank = (dataset.size() + options.world_size - 1) / options.world_size;
    TORCH_CHECK(static_cast<int64_t>(order->size()) == per_rank, "epoch_order gave ", order->size(),
                " samples to rank ", options.rank, "; the loader expects ", per_rank);
  }
  return order;
}
}  // namespace

std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options) {
  if (auto order = source_order(dataset, epoch, options)) return std::move(*order);
  return sampler_epoch_indices(dataset.size(), epoch, options);
}

std::vector<int64_t> sampler_epoch_order(const Dataset& dataset, int64_t epoch, const SamplerOptions& options,
                                         int64_t order_world_size) {
  TORCH_CHECK(order_world_size >= 1, "sampler_epoch_order: order_world_size must be >= 1, got ", order_world_size);
  if (dataset.encoded && options.shuffle) {
    std::vector<std::vector<int64_t>> ranks;
    for (int64_t r = 0; r < order_world_size; ++r) {
      auto order = dataset.encoded->epoch_order(options.seed, epoch, r, order_world_size);
      if (!order) break;  // the sampler's own order
      ranks.push_back(std::move(*order));
    }
    if (!ranks.empty()) {
      // epoch_order also tells a fetching source (remote shards) which rank reads the next epoch: this one.
      (void)dataset.encoded->epoch_order(options.seed, epoch, options.rank, options.world_size);
      const size_t share = ranks.front().size();
      std::vector<int64_t> all(share * ranks.size());
      for (size_t r = 0; r < ranks.size(); ++r) {
        TORCH_CHECK(ranks[r].size() == share, "epoch_order gave rank ", r, " ", ranks[r].size(), " samples, rank 0 ",
                    share);
        for (size_t j = 0; j < share; ++j) all[j * ranks.size() + r] = ranks[r][j];
      }
      return all;
    }
  }
  return shuffled(dataset.size(), epoch, options);
}

std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options,
                                           const EpochPosition& start, int64_t* order_size) {
  const int64_t world = options.world_size, order_world = world_of(start, options);
  TORCH_CHECK(start.taken >= 0, "sampler_epoch_indices: a position must be >= 0, got ", start.taken);
  const auto past_end = [&](int64_t size) {
    return InputError("the position " + std::to_string(start.taken) + " is past the end of epoch " +
                      std::to_string(epoch) + "'s order of " + std::to_string(size) + " samples");
  };
  if (order_world == world && start.taken % world == 0) {  // a batch boundary of the same ranks: one rank's order
    auto own = source_order(dataset, epoch, options);
    std::vector<int64_t> mine = own ? std::move(*own) : sampler_epoch_indices(dataset.size(), epoch, options);
    const int64_t size = own ? static_cast<int64_t>(mine.size()) * world : dataset.size();
    if (order_size) *order_size = size;
    if (start.taken > size) throw past_end(size);
    const auto skip = std::min(static_cast<size_t>(start.taken / world), mine.size());
    mine.erase(mine.begin(), mine.begin() + static_cast<int64_t>(skip));
    return mine;
  }
  const std::vector<int64_t> order = sampler_epoch_order(dataset, epoch, options, order_world);
  const auto size = static_cast<int64_t>(order.size());
  if (order_size) *order_size = size;
  if (start.taken > size) throw past_end(size);
  const int64_t count = (size - start.taken + world - 1) / world;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(count));
  for (int64_t j = 0; j < count; ++j)
    mine.push_back(order[static_cast<size_t>((start.taken + options.rank + j * world) % size)]);
  return mine;
}

} // namespace fastloop
