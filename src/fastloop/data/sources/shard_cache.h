// A local folder of fetched shards (`--data-cache DIR`, at most `--data-cache-size` bytes), so that the
// epochs after the first read remote shards from disk. Safe for several processes (ranks) sharing DIR: a
// shard is written to a temporary file of the writer's own and renamed into place (readers never see a part),
// and a file that vanishes under a reader (another rank's eviction) is a miss, not an error. Eviction removes
// the least recently used files (by mtime; a hit touches its file) until the folder fits the bound. A writer
// that died mid-write (killed, a crashed node) leaves its temporary file: opening the cache removes those not
// written to for kStaleTempSeconds (a live writer's file changes with every write).
#pragma once

#include <cstdint>
#include <string>

namespace fastloop {

class ShardCache {
 public:
  /// `dir` is created when missing, and stale temporary files in it removed; `max_bytes` > 0. An
  /// uncreatable folder throws InputError naming it.
  ShardCache(std::string dir, int64_t max_bytes);

  static constexpr int64_t kStaleTempSeconds = 15 * 60;

  /// The cached copy of `url` into `out` when there is one of exactly `bytes` bytes (the index's size).
  bool get(const std::string& url, int64_t bytes, std::string& out) const;

  /// Stores `data` as `url`'s copy, then evicts the oldest files beyond the bound (never this one). A shard
  /// larger than the bound is not stored. Failures to write (a full disk) are not errors: the run goes on
  /// without that copy.
  void put(const std::string& url, const std::string& data) const;

  /// The file name a URL is kept under: a 64-bit hash of the URL and its last path component.
  static std::string file_name(const std::string& url);

  const std::string& dir() const { return dir_; }

 private:
  void evict(const std::string& keep) const;
  void sweep_stale_temporaries() const;

  std::string dir_;
  int64_t max_bytes_;
};

} // namespace fastloop
