// The order in which one rank visits the samples of WebDataset shards in an epoch, as webdataset's
// pipeline produces it (shard shuffle, split of shards across ranks, each shard read front to back
// through a bounded shuffle buffer), deterministic from (seed, epoch, rank) and independent of the
// number of loader workers: the loader's workers take consecutive batches of this one order.
#pragma once

#include <cstdint>
#include <vector>

namespace fastloop {

struct ShardOrderOptions {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t shuffle_buffer = 2048;  // samples; 1 (or 0) reads each shard in file order
};

/// Sample indices rank `options.rank` visits, when shard s holds `shard_sizes[s]` samples numbered
/// consecutively shard after shard. Steps:
///  1. the shards are shuffled from (seed, epoch);
///  2. rank r takes shards r, r + W, r + 2W, ... of that order (webdataset's split_by_node);
///  3. every rank must take the same number of steps (DDP), so each gets ceil(N / W) samples: ranks
///     over that share pass their last samples to the ranks under it (ranks in order, in stream
///     order), and when N is not a multiple of W the shortfall is padded by wrapping to the first
///     samples, as torch's DistributedSampler pads. With N a multiple of W, every sample is visited
///     exactly once per epoch across the ranks;
///  4. the rank's stream goes through a shuffle buffer of `shuffle_buffer` samples (fill, then emit a
///     random slot and put the next sample there; drain in random order), seeded from (seed, epoch, rank).
std::vector<int64_t> shard_epoch_order(const std::vector<int64_t>& shard_sizes, const ShardOrderOptions& options);

} // namespace fastloop
