// The order of samples in an epoch: a seeded shuffle per epoch, sharded by rank with
// torch.utils.data.DistributedSampler's semantics (every rank the same count, padded by wrapping), and the
// epoch's global order that an epoch resumed at a position, by the same or another number of ranks, shares.
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

/// Where an epoch starts in its global order (sampler_epoch_order): `taken` positions of it were visited
/// before, by all ranks together, in an epoch whose order was made for `order_world_size` ranks (0: the
/// sampler's own world_size). A fresh epoch is {0, 0}; after k batches of B samples on each of W ranks
/// it is {k * B * W, W}, the same number on every rank, so any rank's position resumes the whole group.
struct EpochPosition {
  int64_t taken = 0;
  int64_t order_world_size = 0;
};

/// Indices of `dataset_size` samples that `options.rank` visits in `epoch`, in visiting order.
std::vector<int64_t> sampler_epoch_indices(int64_t dataset_size, int64_t epoch, const SamplerOptions& options);

/// As above for `dataset`; when shuffling, an encoded source that imposes its own order (tar shards:
/// EncodedImages::epoch_order) gives this rank's indices instead.
std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options);

/// The whole epoch in one order, every rank's samples: position p is what rank p % W visits when the epoch
/// runs on the W = `order_world_size` ranks it was made for (the rank's j-th sample is position j * W + rank).
/// The sampler's own: the shuffled indices, N of them (independent of W). A source with its own order
/// (shards): the W ranks' orders interleaved, ceil(N / W) * W of them, their padding included.
std::vector<int64_t> sampler_epoch_order(const Dataset& dataset, int64_t epoch, const SamplerOptions& options,
                                         int64_t order_world_size);

/// The indices `options.rank` of `options.world_size` visits from `start` on: positions start.taken + rank,
/// + world_size, + 2 world_size, ... of the epoch's global order, ceil((its size - taken) / world_size) of
/// them, wrapping past its end (padding, as DistributedSampler pads). Whatever the world size, the ranks
/// visit positions [taken, taken + k * world_size) in their first k samples: each position once. With
/// start {0, 0} this equals sampler_epoch_indices(dataset, epoch, options); with the epoch's own world size
/// and `taken` a multiple of it, those indices from taken / world_size on (computed as such: one rank's
/// order, not the whole epoch's). A position past the order's end throws InputError. `order_size`, when
/// given, receives the size of the epoch's order.
std::vector<int64_t> sampler_epoch_indices(const Dataset& dataset, int64_t epoch, const SamplerOptions& options,
                                           const EpochPosition& start, int64_t* order_size = nullptr);

/// A 64-bit hash of (a, b, c) (splitmix64 rounds): per-sample randomness from (seed, epoch, index),
/// so results never depend on which thread assembled a sample.
uint64_t hash_mix(uint64_t a, uint64_t b, uint64_t c);

} // namespace fastloop
