// The order of samples in an epoch: a seeded shuffle per epoch, sharded by rank with
// torch.utils.data.DistributedSampler's semantics (every rank the same count, padded by wrapping).
#pragma once

#include "fastloop/data/sources/dataset.h"

#include <cstdint>
#include <vector>

namespace fastloop {

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  int64_t rank = 0;
  int64_t world_size = 1;
};

/// Indices of `dataset_size` samples that `options.rank` visits in `epoch`, in visiting order.
std::vector<int64_t> sampler_epoch_indices(int64_t dataset_size, int64_t epoch, const SamplerOptions& options);

/// As above for `dataset`; when shuffling, an encoded source that imposes its own order (tar shards:
/// EncodedImages::epoch_order) gives this rank's indices instead.
std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options);

/// A 64-bit hash of (a, b, c) (splitmix64 rounds): per-sample randomness from (seed, epoch, index),
/// so results never depend on which thread assembled a sample.
uint64_t hash_mix(uint64_t a, uint64_t b, uint64_t c);

} // namespace fastloop
