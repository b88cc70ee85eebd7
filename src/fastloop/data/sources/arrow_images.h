// Images held in Arrow binary columns as EncodedImages splits, in two forms.
//  - ArrowTableImages: every column at hand (a Hugging Face `datasets.Dataset`, whose Arrow cache files are
//    memory-mapped): a sample's bytes are a view into them, and the sampler shuffles the whole split.
//  - ArrowGroupImages: Parquet files, read one row group at a time by a `reader` (pyarrow, through the
//    Python package) on the split's own reader thread. Row groups play the part tar shards do (shard_order.h):
//    the unit of shuffling and of ranks' shares, read front to back through the shuffle buffer. The loader
//    says the order it will read in (reads_planned); the reader thread reads the groups in their order of
//    first use, ahead of the workers, or at once when a worker waits for one, and keeps the bytes of the
//    samples still to come (a copy each) until a worker takes them: memory stays near the shuffle buffer's
//    samples plus the groups read ahead, however long a sample waits in the buffer. The groups last read stay
//    in memory up to `cache_bytes` (a small set's later epochs read nothing, as shards read the page cache).
//    Several image columns (fastloop.Loader(fields=("photo", "depth", "caption"))) are the parts of a sample
//    (EncodedImages::parts), read together: one reader call per group gives every column.
#pragma once

#include "fastloop/core/condition_variable.h"
#include "fastloop/data/sources/arrow_column.h"
#include "fastloop/data/sources/encoded_images.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace fastloop {

class ArrowTableImages : public EncodedImages {
 public:
  /// Sample i is row `rows[i]` of the columns laid end to end (empty `rows`: row i), of class `labels[i]`,
  /// named `name[i]` in messages. Throws InputError when a row is outside the columns or the labels do not
  /// count the samples.
  ArrowTableImages(std::shared_ptr<const std::vector<ArrowBinaryColumn>> columns, std::vector<int64_t> rows,
                   std::vector<int64_t> labels, std::string name);

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  int64_t label(int64_t i) const override { return labels_[static_cast<size_t>(i)]; }
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override;

 private:
  std::pair<size_t, int64_t> locate(int64_t i) const;  // (column, row in it)

  std::shared_ptr<const std::vector<ArrowBinaryColumn>> columns_;
  std::vector<int64_t> starts_;  // the first row of each column, and the total
  std::vector<int64_t> rows_;
  std::vector<int64_t> labels_;
  std::string name_;
};

/// A row group: where it is, for messages ("train-0.parquet, row group 3"), and its rows.
struct ArrowGroup {
  std::string name;
  int64_t rows = 0;
};

/// Reads row group `group`'s image columns, one per part. Runs on the split's reader thread, one call at a time;
/// throws InputError naming the file and row group when it cannot (a worker waiting for it raises that).
using ArrowGroupReader = std::function<std::vector<ArrowBinaryColumn>(int64_t group)>;

class ArrowGroupImages : public EncodedImages {
 public:
  /// Samples are the groups' rows in order, sample i of class `labels[i]`. A shuffling sampler takes
  /// shard_order.h's order over the groups with a `shuffle_buffer`-sample buffer; another reads in file
  /// order. `keep_ahead`: samples read ahead of the workers and kept (0: the shuffle buffer + 4 groups' rows).
  /// `cache_bytes`: image bytes of the groups last read kept for later reads (0: none). `parts`: the image
  /// columns the reader gives per group.
  static constexpr int64_t kCacheBytes = int64_t{256} << 20;
  ArrowGroupImages(std::vector<ArrowGroup> groups, std::vector<int64_t> labels, ArrowGroupReader reader,
                   int64_t shuffle_buffer, int64_t keep_ahead = 0, int64_t cache_bytes = kCacheBytes,
                   int64_t parts = 1);
  /// Joins the reader thread (after the group it reads, if any). reads_cancelled(true) abandons the plan: the
  /// reader reads nothing more until the next reads_planned.
  ~ArrowGroupImages() override;

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  int64_t label(int64_t i) const override { return labels_[static_cast<size_t>(i)]; }
  std::string name(int64_t i) const override;
  std::string_view bytes(int64_t i, std::string& scratch) const override { return part_bytes(i, 0, scratch); }
  int64_t parts() const override { return parts_; }
  std::string_view part_bytes(int64_t i, int64_t part, std::string& scratch) const override;
  std::optional<std::vector<int64_t>> epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                  int64_t world_size) const override;
  void reads_planned(const std::vector<int64_t>& indices, size_t from) const override;
  void reads_cancelled(bool cancelled) const override;
  void read_dropped(int64_t i, int64_t parts_read) const override;

  /// Row groups read since construction (a group is read again only when a sample of it is asked again).
  int64_t groups_read() const;
  /// Images (a sample's parts each) read ahead and kept until a worker takes them.
  int64_t kept() const;

 private:
  using Columns = std::vector<ArrowBinaryColumn>;
  int64_t group_of(int64_t i) const;
  void read_loop() const;
  bool has_work() const;  // with mutex_ held
  void keep(int64_t group, const Columns& columns) const;  // with mutex_ held
  void cache(int64_t group, std::shared_ptr<const Columns> columns) const;  // with mutex_ held
  std::string group_check(int64_t group, const Columns& columns) const;

  std::vector<ArrowGroup> groups_;
  std::vector<int64_t> starts_;  // the first sample of each group, and the total
  std::vector<int64_t> labels_;
  ArrowGroupReader reader_;
  int64_t shuffle_buffer_;
  int64_t keep_ahead_;
  int64_t cache_bytes_;
  int64_t parts_;

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;       // a group was kept or failed; work came; stop
  mutable std::vector<int32_t> owed_;   // sample * parts + part -> reads still to come (the plan's, the asked)
  mutable std::unordered_map<int64_t, std::string> kept_;  // sample * parts + part -> its bytes, until read
  mutable std::unordered_map<int64_t, std::string> failed_;  // group -> why it could not be read (this plan)
  mutable std::deque<int64_t> order_;   // groups in their order of first use, not read yet
  mutable std::deque<int64_t> asked_;   // groups a worker waits for
  mutable std::vector<char> state_;     // group -> kUnread, kReading or kRead in this plan
  mutable int64_t generation_ = 0;      // plans made: a read begun for an older plan is dropped
  mutable int64_t groups_read_ = 0;
  mutable std::unordered_map<int64_t, std::shared_ptr<const Columns>> cached_;  // group -> its columns
  mutable std::deque<int64_t> cache_order_;  // cached_'s groups, oldest first
  mutable int64_t cached_bytes_ = 0;
  mutable bool cancelled_ = false, stopping_ = false;
  mutable std::thread thread_;          // started with the first plan
};

} // namespace fastloop
