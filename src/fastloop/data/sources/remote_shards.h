// WebDataset tar shards in object storage or on a web server (`--data 'shards:s3://BUCKET/train-{0..99}.tar'`,
// http:// and https:// alike) as an EncodedImages split. Sample counts come from the shards.idx beside the
// shards (shard_index_file.h), so the epoch order is the one of the same shards on disk (shard_order.h) and
// nothing is downloaded before the first batch but that index. The loader tells the split the order it
// will read in (reads_planned); each shard is fetched once per epoch by the split's fetch threads, ahead of
// the workers in that order (while the last shard of an epoch is read, the next epoch's first ones) or at
// once when a worker waits for it, and streamed: a worker takes a sample as soon as its bytes have arrived
// (the tar headers are listed as the shard comes in), not when the whole shard has; it is kept in memory
// while this rank's order still reads it
// and, with a cache folder, stored there so later epochs read it from disk. Samples a shard evicted under
// the memory bound still owes are fetched alone with a Range request.
#pragma once

#include "fastloop/core/condition_variable.h"
#include "fastloop/data/sources/encoded_images.h"
#include "fastloop/data/sources/field_shards.h"
#include "fastloop/data/sources/http_fetch.h"
#include "fastloop/data/sources/remote_url.h"
#include "fastloop/data/sources/shard_cache.h"
#include "fastloop/data/sources/shard_index_file.h"
#include "fastloop/data/sources/shard_order.h"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace fastloop {

struct RemoteShardOptions {
  int64_t shuffle_buffer = 2048;  // samples (--shuffle-buffer), as for local shards
  int64_t read_ahead = 2;         // shards fetched ahead of the ones being read, by as many threads; at
                                  // least, raised to keep ~64 MiB in flight with small shards (up to 8)
  std::string cache_dir;          // --data-cache; empty: none
  int64_t cache_bytes = int64_t{10} << 30;  // --data-cache-size
  FetchOptions fetch;             // timeout_s: --data-timeout
  std::optional<bool> shuffled;   // the epoch order on or off; unset: on for the train split, off for val
  std::vector<FieldSpec> fields;  // fastloop.Loader's fields=: samples of fields (as FieldShards); empty: classes
  bool videos = false;            // samples are KEY.mp4 (.mkv, ...) with KEY.cls (remote_video_clips.h)
};

struct RemoteShardSplits;

class RemoteShardImages : public EncodedImages {
 public:
  /// `urls[s]` holds the samples `entries[s]` counts. `shuffled`: the training split (webdataset's order).
  RemoteShardImages(std::vector<RemoteUrl> urls, std::vector<ShardIndexEntry> entries,
                    std::shared_ptr<const HttpFetcher> fetcher, std::shared_ptr<const ShardCache> cache,
                    bool shuffled, const RemoteShardOptions& options);
  /// Cancels the fetches under way and joins the read-ahead threads.
  ~RemoteShardImages() override;

  int64_t size() const override { return first_.back(); }
  int64_t label(int64_t i) const override;
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override;
  /// With fields: one per image field. bytes() keeps the other image fields' members with the sample's other
  /// fields, for part_bytes() (which releases them when the sample has no other field).
  int64_t parts() const override { return options_.fields.empty() ? 1 : static_cast<int64_t>(image_fields_.size()); }
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override;
  void reads_cancelled(bool cancelled) const override;
  /// With fields: lets go what bytes() kept of the sample for that read (a bad image skipped after its fields
  /// were checked). A new plan (reads_planned) lets go of all that the last one kept.
  void read_dropped(int64_t i, int64_t parts_read) const override;

  int64_t num_classes() const { return num_classes_; }
  /// The class names remote_shards_load found for the split (classes.txt, or numbered up to num_classes()).
  const std::vector<std::string>& classes() const { return classes_; }
  /// With fields (options.fields): bytes(i) checks every field of sample i (as FieldShards does) and keeps its
  /// other fields until the consumer reads them here, by the batch's indices (labels, which are the indices).
  /// Field f of sample i as bytes() kept it; reading the last field that is not an image releases the sample.
  std::string field(int64_t i, size_t f) const;
  const std::vector<FieldSpec>& fields() const { return options_.fields; }
  /// GETs made, retries and bytes received, by this split's fetcher (shared with the other split's).
  const FetchCounters& counters() const { return fetcher_->counters(); }
  /// Shards read from the cache folder instead of the store.
  int64_t cache_hits() const { return cache_hits_.load(); }
  /// With fields: samples whose other fields are kept until the consumer reads them.
  int64_t kept() const;
  /// The shards' URLs, and per shard the index of its first sample (then the number of samples).
  const std::vector<RemoteUrl>& urls() const { return urls_; }
  const std::vector<int64_t>& shard_starts() const { return first_; }

 private:
  struct Meta {
    int64_t offset, size, label;  // with fields: the first image field's member (size -1: none); label unused
    std::string image;            // the member's name; with fields, the sample's key
    std::vector<std::pair<int64_t, int64_t>> fields;  // with fields: each field's member (field_groups)
  };
  enum class State { kAbsent, kLoading, kReady, kFailed };
  struct Shard {
    State state = State::kAbsent;
    std::shared_ptr<const std::string> data;  // kReady: the tar file; kLoading: the part arrived (never moves)
    const char* base = nullptr;               // kLoading: data's bytes, read below `arrived` only
    int64_t arrived = 0;                      // kLoading: bytes of `data` that readers may use
    int64_t parsed = 0;                       // kLoading: `arrived` when `streamed` was listed
    std::vector<Meta> streamed;               // kLoading: the samples complete in the bytes arrived
    std::vector<Meta> meta;                   // after the first load; kept when the data is dropped
    std::exception_ptr error;                 // kFailed
    int64_t uses_left = 0;                    // reads this epoch's plan still has for the shard
    int64_t position = 0;                     // where the plan reads it first (shard order); max: not planned
    bool evicted = false;                     // dropped this epoch while reads were left
    bool wanted = false;                      // in wanted_: a worker waits for it
    int64_t waiters = 0;                      // workers waiting in wait_sample
    bool drop_when_loaded = false;            // the plan's last read of it came while it arrived
  };

  int64_t shard_of(int64_t i) const;
  Meta wait_sample(int64_t s, int64_t k, std::unique_lock<std::mutex>& lock, std::shared_ptr<const std::string>& data,
                   const char*& base) const;
  void list_arrived(int64_t s, std::unique_lock<std::mutex>& lock) const;
  void load(int64_t s, std::unique_lock<std::mutex>& lock) const;
  std::vector<Meta> fetch(int64_t s, std::string& data) const;
  int64_t next_to_fetch(std::unique_lock<std::mutex>& lock) const;
  void drop(int64_t s) const;
  void evict_over_bound(int64_t keep) const;
  void read_ahead_loop() const;
  bool fetch_worth(int64_t s) const;
  int64_t next_epoch_first_absent(std::unique_lock<std::mutex>& lock) const;
  std::string sample_alone(int64_t s, const Meta& m, std::string& scratch) const;
  friend RemoteShardSplits remote_shards_load(const std::string& arg, const RemoteShardOptions& options);
  void fields_setup();
  std::vector<Meta> listed(std::string_view data, const std::string& where, bool arriving) const;
  std::string_view sample_fields(int64_t i, int64_t s, const Meta& m, const char* base, std::string& scratch) const;

  std::vector<RemoteUrl> urls_;
  std::vector<ShardIndexEntry> entries_;
  std::vector<int64_t> first_;  // first_[s]: index of shard s's first sample; first_.back(): all samples
  std::shared_ptr<const HttpFetcher> fetcher_;
  std::shared_ptr<const ShardCache> cache_;
  bool shuffled_;
  RemoteShardOptions options_;
  int64_t num_classes_ = 0;
  std::vector<std::string> classes_;  // set by remote_shards_load
  int64_t resident_max_ = 0;  // bytes of shards held in memory before the oldest are dropped

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable std::vector<Shard> shards_;
  mutable std::vector<int64_t> plan_;   // shards in the order the plan first reads them
  mutable int64_t frontier_ = -1;       // furthest position of plan_ read so far
  mutable int64_t resident_bytes_ = 0;  // ready and loading shards
  mutable int64_t loading_ = 0;         // shards being fetched
  mutable std::deque<int64_t> wanted_;  // absent shards workers wait for: fetched first
  mutable bool closing_ = false;
  mutable std::optional<ShardOrderOptions> next_epoch_;  // the epoch after the last epoch_order() (train split)
  mutable std::vector<int64_t> next_first_;             // its first shards on this rank, once computed
  mutable std::atomic<bool> cancel_{false};
  mutable std::atomic<int64_t> cache_hits_{0};
  std::vector<std::thread> readers_;
  struct Kept {
    int64_t reads = 0;  // bytes() calls not yet consumed (a mixture may read a sample twice at once)
    std::vector<std::string> values;
  };
  std::vector<size_t> image_fields_;  // with fields: the ones the workers decode (part k: image_fields_[k])
  std::optional<size_t> last_other_field_;  // with fields: the last that is not an image: reading it releases
                                            // a sample (none: reading its last image part does)
  mutable std::mutex kept_mutex_;
  mutable std::unordered_map<int64_t, Kept> kept_;  // with fields: samples read, their other fields
};

/// The splits of a remote `shards:` argument (what data_load passes for shards:s3://..., http(s)://...):
///   URL_DIR                       URL_DIR/shards.idx names the shards: train-*.tar and val-*.tar;
///   TRAIN_PATTERN[::VAL_PATTERN]  brace patterns of URLs, each shard listed in the shards.idx beside it.
/// classes.txt beside the first train shard names the classes when there is one. A missing index, a shard
/// it does not list, a bad URL or credentials throw InputError saying what to do.
struct RemoteShardSplits {
  std::shared_ptr<RemoteShardImages> train;
  std::shared_ptr<RemoteShardImages> val;  // null: no evaluation split
  int64_t num_classes = 0;
  std::vector<std::string> classes;
};
RemoteShardSplits remote_shards_load(const std::string& arg, const RemoteShardOptions& options);

} // namespace fastloop
