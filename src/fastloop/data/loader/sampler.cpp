// Seeded per-epoch shuffling and rank sharding of sample indices.
#include "fastloop/data/loader/sampler.h"

#include <c10/util/Exception.h>

#include <numeric>
#include <random>

namespace fastloop {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

uint64_t hash_mix(uint64_t a, uint64_t b, uint64_t c) {
  return splitmix64(splitmix64(splitmix64(a) ^ b) ^ c);
}

std::vector<int64_t> sampler_epoch_indices(int64_t dataset_size, int64_t epoch, const SamplerOptions& options) {
  std::vector<int64_t> all(static_cast<size_t>(dataset_size));
  std::iota(all.begin(), all.end(), int64_t{0});
  if (options.shuffle) {
    std::mt19937_64 rng(hash_mix(options.seed, static_cast<uint64_t>(epoch), 0x5eed));
    for (size_t i = all.size(); i > 1; --i) {  // Fisher-Yates; std::shuffle's order is unspecified
      std::swap(all[i - 1], all[static_cast<size_t>(rng() % i)]);
    }
  }
  const int64_t world = options.world_size;
  const int64_t per_rank = (dataset_size + world - 1) / world;
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per_rank));
  for (int64_t k = options.rank; k < per_rank * world; k += world) {
    mine.push_back(all[static_cast<size_t>(k % dataset_size)]);  // wrap to pad the last round
  }
  return mine;
}

std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options) {
  if (dataset.encoded && options.shuffle) {
    if (auto order = dataset.encoded->epoch_order(options.seed, epoch, options.rank, options.world_size)) {
      const int64_t per_rank = (dataset.size() + options.world_size - 1) / options.world_size;
      TORCH_CHECK(static_cast<int64_t>(order->size()) == per_rank, "epoch_order gave ", order->size(),
                  " samples to rank ", options.rank, "; the loader expects ", per_rank);
      return std::move(*order);
    }
  }
  return sampler_epoch_indices(dataset.size(), epoch, options);
}

} // namespace fastloop
