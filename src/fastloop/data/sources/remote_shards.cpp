// Remote tar shards: planned, read-ahead, cached fetches of whole shards (see remote_shards.h).
#include "fastloop/data/sources/remote_shards.h"

#include "fastloop/core/condition_variable.h"  // changed_ waits here
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/shard_order.h"
#include "fastloop/data/sources/shards.h"

#include <pthread.h>

#include <algorithm>
#include <limits>

namespace fastloop {
namespace {

constexpr int64_t kReadAheadBytes = int64_t{64} << 20;  // bytes in flight ahead of the reading workers
constexpr int64_t kMaxReadAhead = 8;                      // shards (and threads) at most
// A shard arriving tells the workers every this many bytes (at least 256 KiB, at most 32 times per shard:
// each time, a waiting worker lists the tar headers arrived, O(the shard's members)).
int64_t report_every(int64_t shard_bytes) { return std::max<int64_t>(int64_t{256} << 10, shard_bytes / 32); }

} // namespace

RemoteShardImages::RemoteShardImages(std::vector<RemoteUrl> urls, std::vector<ShardIndexEntry> entries,
                                     std::shared_ptr<const HttpFetcher> fetcher, std::shared_ptr<const ShardCache> cache,
                                     bool shuffled, const RemoteShardOptions& options)
    : urls_(std::move(urls)), entries_(std::move(entries)), fetcher_(std::move(fetcher)), cache_(std::move(cache)),
      shuffled_(shuffled), options_(options), shards_(urls_.size()) {
  if (urls_.empty()) throw InputError("shards: no shard URLs given");
  first_.assign(1, 0);
  int64_t largest = 0;
  for (size_t s = 0; s < entries_.size(); ++s) {
    first_.push_back(first_.back() + entries_[s].samples);
    num_classes_ = std::max(num_classes_, entries_[s].classes);
    largest = std::max(largest, entries_[s].bytes);
    shards_[s].position = std::numeric_limits<int64_t>::max();  // no plan, no read-ahead: until the loader plans
  }
  fields_setup();
  int64_t total_bytes = 0;
  for (const auto& e : entries_) total_bytes += e.bytes;
  // Small shards need more fetches in flight to hide each request's latency: at least `read_ahead` shards
  // and about kReadAheadBytes, at most kMaxReadAhead shards (one thread each).
  const int64_t mean_bytes = std::max<int64_t>(1, total_bytes / static_cast<int64_t>(entries_.size()));
  options_.read_ahead = std::clamp((kReadAheadBytes + mean_bytes - 1) / mean_bytes, options_.read_ahead,
                                   std::max(options_.read_ahead, kMaxReadAhead));
  // The shards being read, those ahead, and about twice the shuffle buffer's samples: what the epoch
  // order needs at once; beyond it the oldest go and their stragglers are fetched alone.
  const int64_t buffer_bytes = 2 * options_.shuffle_buffer * (total_bytes / std::max<int64_t>(1, first_.back()) + 1);
  resident_max_ = (options_.read_ahead + 2) * largest + buffer_bytes;
  for (int64_t r = 0; r < options_.read_ahead; ++r) {
    readers_.emplace_back([this] { read_ahead_loop(); });
    pthread_setname_np(readers_.back().native_handle(), "fastloop-fetch");
  }
}

RemoteShardImages::~RemoteShardImages() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    cancel_ = true;
  }
  changed_.notify_all();
  for (auto& reader : readers_) reader.join();
}

int64_t RemoteShardImages::shard_of(int64_t i) const {
  return static_cast<int64_t>(std::upper_bound(first_.begin(), first_.end(), i) - first_.begin()) - 1;
}

std::optional<std::vector<int64_t>> RemoteShardImages::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                                   int64_t world_size) const {
  if (!shuffled_) return std::nullopt;
  std::vector<int64_t> sizes;
  for (const auto& e : entries_) sizes.push_back(e.samples);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    next_epoch_ = ShardOrderOptions{seed, epoch + 1, rank, world_size, options_.shuffle_buffer};
    next_first_.clear();
  }
  return shard_epoch_order(sizes, {seed, epoch, rank, world_size, options_.shuffle_buffer});
}

void RemoteShardImages::reads_planned(const std::vector<int64_t>& indices, size_t from) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Shard& shard : shards_) {
    shard.uses_left = 0;
    shard.position = std::numeric_limits<int64_t>::max();
    shard.evicted = false;
    shard.drop_when_loaded = false;
    if (shard.state == State::kFailed) shard.state = State::kAbsent, shard.error = nullptr;  // try again
  }
  plan_.clear();
  for (size_t k = from; k < indices.size(); ++k) {
    Shard& shard = shards_[static_cast<size_t>(shard_of(indices[k]))];
    if (shard.uses_left++ == 0) {
      shard.position = static_cast<int64_t>(plan_.size());
      plan_.push_back(shard_of(indices[k]));
    }
  }
  frontier_ = -1;
  for (size_t s = 0; s < shards_.size(); ++s)
    if (shards_[s].state == State::kReady && shards_[s].uses_left == 0) drop(static_cast<int64_t>(s));
  {
    std::lock_guard<std::mutex> kept(kept_mutex_);  // the last plan's batches were all consumed, or abandoned
    kept_.clear();
  }
  changed_.notify_all();
}

void RemoteShardImages::reads_cancelled(bool cancelled) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancel_ = cancelled;
  }
  changed_.notify_all();
}

// The tar file of shard s, from the cache or the store, checked against the index.
std::vector<RemoteShardImages::Meta> RemoteShardImages::fetch(int64_t s, std::string& data) const {
  const RemoteUrl& url = urls_[static_cast<size_t>(s)];
  const ShardIndexEntry& entry = entries_[static_cast<size_t>(s)];
  const std::string key = remote_url_http(url, fetcher_->credentials().endpoint, fetcher_->credentials().region);
  const bool cached = cache_ && cache_->get(key, entry.bytes, data);
  if (cached) ++cache_hits_;
  if (!cached) {
    Shard& shard = shards_[static_cast<size_t>(s)];
    const int64_t every = report_every(entry.bytes);
    int64_t next_report = every;
    fetcher_->stream(url, data, [&](int64_t got) {
      if (got < next_report) return;
      next_report = got + every;
      std::lock_guard<std::mutex> lock(mutex_);
      shard.arrived = got;
      changed_.notify_all();
    }, &cancel_);
  }
  std::vector<Meta> meta = listed(data, url.text, false);  // a truncated tar is named as on disk
  if (static_cast<int64_t>(meta.size()) != entry.samples || static_cast<int64_t>(data.size()) != entry.bytes)
    throw InputError(url.text + ": " + std::to_string(data.size()) + " bytes holding " + std::to_string(meta.size()) +
                     " samples, but its index says " + std::to_string(entry.bytes) + " bytes and " +
                     std::to_string(entry.samples) + " samples: the shard was changed or truncated on the server; "
                     "upload it again, or rewrite shards.idx (`fastloop pack --index-only DIR`)");
  if (cache_ && !cached) cache_->put(key, data);
  return meta;
}

// Fetches shard s with `lock` released, its bytes readable as they arrive; marks it ready, or failed with
// the error for whoever reads it.
void RemoteShardImages::load(int64_t s, std::unique_lock<std::mutex>& lock) const {
  Shard& shard = shards_[static_cast<size_t>(s)];
  const int64_t bytes = entries_[static_cast<size_t>(s)].bytes;
  auto data = std::make_shared<std::string>();
  data->reserve(static_cast<size_t>(bytes) + 1);  // one byte more: an object grown on the server shows as such
  shard.state = State::kLoading;
  shard.data = data;
  shard.base = data->data();
  shard.arrived = shard.parsed = 0;
  resident_bytes_ += bytes;
  ++loading_;
  lock.unlock();
  std::vector<Meta> meta;
  std::exception_ptr error;
  try {
    meta = fetch(s, *data);
  } catch (const FetchCancelled&) {
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  --loading_;
  shard.streamed = {};
  shard.arrived = shard.parsed = 0;
  if (meta.empty()) {
    resident_bytes_ -= bytes;
    shard.data.reset();
    shard.state = error ? State::kFailed : State::kAbsent;  // cancelled: fetched again when read again
    shard.error = error;
  } else {
    shard.state = State::kReady;
    if (shard.meta.empty()) shard.meta = std::move(meta);
    if (shard.drop_when_loaded && shard.waiters == 0)
      drop(s);  // the plan's last read of it went out while it arrived, and no one reads beyond the plan
    else
      evict_over_bound(s);
    shard.drop_when_loaded = false;
  }
  changed_.notify_all();
}

void RemoteShardImages::drop(int64_t s) const {
  Shard& shard = shards_[static_cast<size_t>(s)];
  if (shard.state != State::kReady) return;
  shard.data.reset();  // a reader still copying holds its own reference
  shard.state = State::kAbsent;
  resident_bytes_ -= entries_[static_cast<size_t>(s)].bytes;
  if (shard.uses_left > 0) shard.evicted = true;
}

// Over the memory bound: drops the ready shard read longest ago, else the one planned furthest ahead.
void RemoteShardImages::evict_over_bound(int64_t keep) const {
  while (resident_bytes_ > resident_max_) {
    int64_t victim = -1;
    for (size_t s = 0; s < shards_.size(); ++s) {
      const Shard& shard = shards_[s];
      if (shard.state != State::kReady || static_cast<int64_t>(s) == keep) continue;
      const bool behind = shard.position <= frontier_;
      const Shard* best = victim < 0 ? nullptr : &shards_[static_cast<size_t>(victim)];
      const bool best_behind = best && best->position <= frontier_;
      if (!best || (behind && (!best_behind || shard.position < best->position)) ||
          (!behind && !best_behind && shard.position > best->position))
        victim = static_cast<int64_t>(s);
    }
    if (victim < 0) return;
    drop(victim);
  }
}

// Sample k of shard s once its bytes are in memory: the whole shard, or the part arrived so far. An absent
// shard is fetched by a fetch thread when one is free (this worker waits), else by this worker.
RemoteShardImages::Meta RemoteShardImages::wait_sample(int64_t s, int64_t k, std::unique_lock<std::mutex>& lock,
                                                       std::shared_ptr<const std::string>& data,
                                                       const char*& base) const {
  Shard& shard = shards_[static_cast<size_t>(s)];
  for (;;) {
    if (cancel_ || fetch_interrupted())  // a cancelled fetch left the shard absent: fetching again would spin
      throw FetchCancelled(urls_[static_cast<size_t>(s)].text + ": read cancelled (the loader stopped, or Ctrl-C)");
    if (shard.state == State::kReady) {
      data = shard.data;
      base = data->data();
      return shard.meta[static_cast<size_t>(k)];
    }
    if (shard.state == State::kFailed) std::rethrow_exception(shard.error);
    if (shard.state == State::kLoading && k < static_cast<int64_t>(shard.streamed.size())) {
      data = shard.data;
      base = shard.base;
      return shard.streamed[static_cast<size_t>(k)];
    }
    if (shard.state == State::kLoading && shard.arrived > shard.parsed) {
      list_arrived(s, lock);
      continue;
    }
    if (shard.state == State::kAbsent && loading_ >= static_cast<int64_t>(readers_.size())) {
      load(s, lock);  // every fetch thread is busy
      continue;
    }
    if (shard.state == State::kAbsent && !shard.wanted) {
      shard.wanted = true;
      wanted_.push_back(s);
      changed_.notify_all();
    }
    ++shard.waiters;
    changed_.wait(lock);
    --shard.waiters;
  }
}

// Lists the samples complete in the part of shard s arrived so far, with `lock` released (the bytes below
// `arrived` no longer change). A malformed shard lists what it can; its error comes when it has all arrived.
void RemoteShardImages::list_arrived(int64_t s, std::unique_lock<std::mutex>& lock) const {
  Shard& shard = shards_[static_cast<size_t>(s)];
  const std::shared_ptr<const std::string> data = shard.data;  // the buffer outlives a failed fetch's reset
  const std::string_view arrived(shard.base, static_cast<size_t>(shard.arrived));
  shard.parsed = shard.arrived;  // the other workers wait for this listing rather than repeat it
  lock.unlock();
  std::vector<Meta> streamed;
  try {
    streamed = listed(arrived, urls_[static_cast<size_t>(s)].text, true);
  } catch (const InputError&) {
  }
  lock.lock();
  if (shard.state == State::kLoading && shard.data == data && streamed.size() > shard.streamed.size())
    shard.streamed = std::move(streamed);
  changed_.notify_all();
}

int64_t RemoteShardImages::label(int64_t i) const {
  if (!options_.fields.empty()) return i;  // the consumer reads the fields by the sample's index
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t s = shard_of(i);
  const int64_t k = i - first_[static_cast<size_t>(s)];
  const Shard& shard = shards_[static_cast<size_t>(s)];
  if (!shard.meta.empty()) return shard.meta[static_cast<size_t>(k)].label;
  std::shared_ptr<const std::string> data;
  const char* base = nullptr;
  return wait_sample(s, k, lock, data, base).label;
}

std::string RemoteShardImages::name(int64_t i) const {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t s = shard_of(i);
  const Shard& shard = shards_[static_cast<size_t>(s)];
  const auto k = static_cast<size_t>(i - first_[static_cast<size_t>(s)]);
  std::string out = urls_[static_cast<size_t>(s)].text;
  out += ':';
  if (shard.meta.empty()) {  // not fetched yet: its place in the shard
    out += '#';
    out += std::to_string(k);
  } else {
    out += shard.meta[k].image;
  }
  return out;
}

// A sample of a shard dropped under the memory bound: its bytes alone, from the cache file or by Range.
std::string RemoteShardImages::sample_alone(int64_t s, const Meta& m, std::string& scratch) const {
  const RemoteUrl& url = urls_[static_cast<size_t>(s)];
  std::string whole;
  const std::string key = remote_url_http(url, fetcher_->credentials().endpoint, fetcher_->credentials().region);
  if (cache_ && cache_->get(key, entries_[static_cast<size_t>(s)].bytes, whole)) {
    scratch.assign(whole, static_cast<size_t>(m.offset), static_cast<size_t>(m.size));
  } else {
    scratch = fetcher_->get(url, m.offset, m.size, &cancel_);
  }
  if (static_cast<int64_t>(scratch.size()) != m.size)
    throw InputError(url.text + ": " + m.image + ": the server gave " + std::to_string(scratch.size()) + " of its " +
                     std::to_string(m.size) + " bytes; the shard was truncated on the server");
  return scratch;
}

std::string_view RemoteShardImages::bytes(int64_t i, std::string& scratch) const {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t s = shard_of(i);
  Shard& shard = shards_[static_cast<size_t>(s)];
  if (shard.position != std::numeric_limits<int64_t>::max() && shard.position > frontier_) {
    frontier_ = shard.position;
    changed_.notify_all();  // the read-ahead threads look further
  }
  if (shard.state == State::kAbsent && shard.evicted && !shard.meta.empty()) {
    const Meta m = shard.meta[static_cast<size_t>(i - first_[static_cast<size_t>(s)])];
    if (shard.uses_left > 0) --shard.uses_left;
    lock.unlock();
    if (!options_.fields.empty()) return sample_fields(i, s, m, nullptr, scratch);
    sample_alone(s, m, scratch);
    return scratch;
  }
  std::shared_ptr<const std::string> data;  // holds the bytes while they are copied
  const char* base = nullptr;
  const Meta m = wait_sample(s, i - first_[static_cast<size_t>(s)], lock, data, base);
  if (shard.uses_left > 0 && --shard.uses_left == 0) {
    shard.drop_when_loaded = shard.state == State::kLoading;
    drop(s);  // ready: now; still arriving: once it has
  }
  lock.unlock();
  if (!options_.fields.empty()) return sample_fields(i, s, m, base, scratch);
  scratch.assign(base + m.offset, static_cast<size_t>(m.size));  // a copy: the shard may be dropped after
  return scratch;
}

} // namespace fastloop
