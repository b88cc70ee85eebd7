// Remote tar shards: what the split's fetch threads fetch next — a shard a worker waits for, the plan's next
// ones within the read-ahead, the next epoch's first (see remote_shards.h).
#include "fastloop/data/sources/remote_shards.h"

#include "fastloop/core/condition_variable.h"  // changed_ waits here
#include "fastloop/data/sources/shard_order.h"

#include <algorithm>

namespace fastloop {

void RemoteShardImages::read_ahead_loop() const {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!closing_) {
    const int64_t next = next_to_fetch(lock);
    if (next < 0) {
      changed_.wait(lock);
      continue;
    }
    load(next, lock);
  }
}

// What a free fetch thread fetches: a shard a worker waits for (whatever the memory bound), else the next absent
// one within the read-ahead of the plan, else the next epoch's first ones; -1 for none.
int64_t RemoteShardImages::next_to_fetch(std::unique_lock<std::mutex>& lock) const {
  while (!wanted_.empty()) {
    const int64_t s = wanted_.front();
    wanted_.pop_front();
    shards_[static_cast<size_t>(s)].wanted = false;
    if (shards_[static_cast<size_t>(s)].state == State::kAbsent && !cancel_ && !fetch_interrupted()) return s;
  }
  const int64_t end = std::min<int64_t>(static_cast<int64_t>(plan_.size()), frontier_ + 1 + options_.read_ahead);
  for (int64_t p = std::max<int64_t>(0, frontier_); p < end && !cancel_ && !fetch_interrupted(); ++p)
    if (fetch_worth(plan_[static_cast<size_t>(p)])) return plan_[static_cast<size_t>(p)];
  // Reading the plan's last shard: the next epoch's first shards, so that it does not start with a wait.
  if (!plan_.empty() && frontier_ + 1 >= static_cast<int64_t>(plan_.size()) && next_epoch_.has_value())
    return next_epoch_first_absent(lock);
  return -1;
}

bool RemoteShardImages::fetch_worth(int64_t s) const {
  const Shard& shard = shards_[static_cast<size_t>(s)];
  return shard.state == State::kAbsent && !shard.evicted &&
         resident_bytes_ + entries_[static_cast<size_t>(s)].bytes <= resident_max_;
}

// The first of the next epoch's first `read_ahead` shards (on this rank) that is not in memory, or -1. The order
// is computed once per epoch, with `lock` released: it is the epoch order's work, O(samples).
int64_t RemoteShardImages::next_epoch_first_absent(std::unique_lock<std::mutex>& lock) const {
  if (next_first_.empty()) {
    ShardOrderOptions next = *next_epoch_;
    lock.unlock();
    std::vector<int64_t> sizes;
    for (const auto& e : entries_) sizes.push_back(e.samples);
    std::vector<int64_t> first;
    for (int64_t i : shard_epoch_order(sizes, next)) {
      const int64_t s = shard_of(i);
      if (std::find(first.begin(), first.end(), s) == first.end()) first.push_back(s);
      if (static_cast<int64_t>(first.size()) == options_.read_ahead) break;
    }
    lock.lock();
    if (!next_epoch_.has_value() || next_epoch_->epoch != next.epoch) return -1;  // re-planned meanwhile
    next_first_ = std::move(first);
  }
  if (cancel_ || fetch_interrupted()) return -1;
  for (int64_t s : next_first_)
    if (fetch_worth(s)) return s;
  return -1;
}

} // namespace fastloop
