// WebDataset's epoch order over tar shards (see shard_order.h). Uses mt19937_64 with modulo draws, like
// the sampler: both are specified exactly, so the order is the same with every standard library. Free of
// LibTorch (its own seed mixing, not the sampler's hash_mix), so the tar fuzzer links it alone.
#include "fastloop/data/sources/shard_order.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace fastloop {
namespace {

constexpr uint64_t kShardShuffleTag = 0x5a4d5ULL;  // keeps these draws apart from the sampler's
constexpr uint64_t kBufferTag = 0xb0ff3ULL;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A seed from (a, b, c): three splitmix64 rounds.
uint64_t seed_mix(uint64_t a, uint64_t b, uint64_t c) { return splitmix64(splitmix64(splitmix64(a) ^ b) ^ c); }

// Each rank's samples after steps 1-2: its shards' samples, shard by shard, each in file order.
std::vector<std::vector<int64_t>> rank_streams(const std::vector<int64_t>& shard_sizes, const ShardOrderOptions& o) {
  const auto shards = static_cast<int64_t>(shard_sizes.size());
  std::vector<int64_t> first(shard_sizes.size() + 1, 0);
  std::partial_sum(shard_sizes.begin(), shard_sizes.end(), first.begin() + 1);
  std::vector<int64_t> perm(shard_sizes.size());
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::mt19937_64 rng(seed_mix(o.seed, static_cast<uint64_t>(o.epoch), kShardShuffleTag));
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[static_cast<size_t>(rng() % i)]);
  std::vector<std::vector<int64_t>> streams(static_cast<size_t>(o.world_size));
  for (int64_t k = 0; k < shards; ++k) {
    auto& stream = streams[static_cast<size_t>(k % o.world_size)];
    const int64_t s = perm[static_cast<size_t>(k)];
    for (int64_t i = first[s]; i < first[s + 1]; ++i) stream.push_back(i);
  }
  return streams;
}

// Step 3: the rank's share of ceil(N / W) samples.
std::vector<int64_t> balanced_share(const std::vector<std::vector<int64_t>>& streams, int64_t rank) {
  int64_t total = 0;
  for (const auto& s : streams) total += static_cast<int64_t>(s.size());
  const auto world = static_cast<int64_t>(streams.size());
  const int64_t share = (total + world - 1) / world;
  std::vector<int64_t> pool;  // the samples ranks over their share pass on, in rank order
  for (const auto& s : streams)
    if (static_cast<int64_t>(s.size()) > share) pool.insert(pool.end(), s.begin() + share, s.end());
  size_t taken = 0;  // pool samples the ranks before `rank` took
  for (int64_t r = 0; r < rank; ++r)
    taken += static_cast<size_t>(std::max<int64_t>(0, share - static_cast<int64_t>(streams[r].size())));
  const auto& own = streams[static_cast<size_t>(rank)];
  std::vector<int64_t> mine(own.begin(), own.begin() + std::min<int64_t>(share, static_cast<int64_t>(own.size())));
  std::vector<int64_t> wrap;  // padding: the first samples of all streams, in rank order
  while (static_cast<int64_t>(mine.size()) < share) {
    if (taken < pool.size()) {
      mine.push_back(pool[taken++]);
      continue;
    }
    if (wrap.empty())
      for (const auto& s : streams) wrap.insert(wrap.end(), s.begin(), s.end());
    mine.push_back(wrap[(taken++ - pool.size()) % wrap.size()]);
  }
  return mine;
}

} // namespace

std::vector<int64_t> shard_epoch_order(const std::vector<int64_t>& shard_sizes, const ShardOrderOptions& options) {
  const auto streams = rank_streams(shard_sizes, options);
  const std::vector<int64_t> stream = balanced_share(streams, options.rank);
  const size_t capacity = static_cast<size_t>(std::max<int64_t>(1, options.shuffle_buffer));
  std::mt19937_64 rng(seed_mix(seed_mix(options.seed, static_cast<uint64_t>(options.epoch), kBufferTag),
                               static_cast<uint64_t>(options.rank), 0));
  std::vector<int64_t> order, buffer;
  order.reserve(stream.size());
  buffer.reserve(std::min(capacity, stream.size()));
  for (int64_t sample : stream) {
    if (buffer.size() < capacity) {
      buffer.push_back(sample);
      continue;
    }
    int64_t& slot = buffer[static_cast<size_t>(rng() % capacity)];
    order.push_back(slot);
    slot = sample;
  }
  while (!buffer.empty()) {
    std::swap(buffer[static_cast<size_t>(rng() % buffer.size())], buffer.back());
    order.push_back(buffer.back());
    buffer.pop_back();
  }
  return order;
}

} // namespace fastloop
