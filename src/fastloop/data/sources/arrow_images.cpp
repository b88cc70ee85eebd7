#include "fastloop/data/sources/arrow_images.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/sources/http_fetch.h"
#include "fastloop/data/sources/shard_order.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace fastloop {

namespace {

// The first index of each of `counts`' runs laid end to end, and the total.
template <typename Count>
std::vector<int64_t> run_starts(const std::vector<Count>& runs, int64_t (*count)(const Count&)) {
  std::vector<int64_t> starts{0};
  for (const Count& run : runs) starts.push_back(starts.back() + count(run));
  return starts;
}

// The run of `starts` (run_starts) that holds index i.
size_t run_of(const std::vector<int64_t>& starts, int64_t i) {
  return static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), i) - starts.begin() - 1);
}

enum GroupState : char { kUnread = 0, kReading = 1, kRead = 2 };

}  // namespace

ArrowTableImages::ArrowTableImages(std::shared_ptr<const std::vector<ArrowBinaryColumn>> columns,
                                   std::vector<int64_t> rows, std::vector<int64_t> labels, std::string name)
    : columns_(std::move(columns)),
      starts_(run_starts<ArrowBinaryColumn>(*columns_, [](const ArrowBinaryColumn& c) { return c.size(); })),
      rows_(std::move(rows)),
      labels_(std::move(labels)),
      name_(std::move(name)) {
  const int64_t samples = rows_.empty() ? starts_.back() : static_cast<int64_t>(rows_.size());
  if (static_cast<int64_t>(labels_.size()) != samples)
    throw InputError(name_ + ": " + std::to_string(labels_.size()) + " labels for " + std::to_string(samples) +
                     " images; give one label per row");
  for (int64_t row : rows_)
    if (row < 0 || row >= starts_.back())
      throw InputError(name_ + ": row " + std::to_string(row) + " is outside its " +
                       std::to_string(starts_.back()) + " rows");
}

std::pair<size_t, int64_t> ArrowTableImages::locate(int64_t i) const {
  const int64_t row = rows_.empty() ? i : rows_[static_cast<size_t>(i)];
  const size_t column = run_of(starts_, row);
  return {column, row - starts_[column]};
}

std::string ArrowTableImages::name(int64_t i) const { return name_ + "[" + std::to_string(i) + "]"; }

std::string_view ArrowTableImages::bytes(int64_t i, std::string& scratch) const {
  (void)scratch;
  const auto [column, row] = locate(i);
  return (*columns_)[column].value(row);
}

ArrowGroupImages::ArrowGroupImages(std::vector<ArrowGroup> groups, std::vector<int64_t> labels,
                                   ArrowGroupReader reader, int64_t shuffle_buffer, int64_t keep_ahead,
                                   int64_t cache_bytes, int64_t parts)
    : groups_(std::move(groups)),
      starts_(run_starts<ArrowGroup>(groups_, [](const ArrowGroup& g) { return g.rows; })),
      labels_(std::move(labels)),
      reader_(std::move(reader)),
      shuffle_buffer_(shuffle_buffer),
      cache_bytes_(cache_bytes),
      parts_(parts) {
  if (parts_ < 1) throw InputError("Parquet: " + std::to_string(parts_) + " image columns; give one at least");
  if (static_cast<int64_t>(labels_.size()) != starts_.back())
    throw InputError("Parquet: " + std::to_string(labels_.size()) + " labels for " + std::to_string(starts_.back()) +
                     " rows; give one label per row");
  int64_t largest = 0;
  for (const ArrowGroup& g : groups_) largest = std::max(largest, g.rows);
  keep_ahead_ = keep_ahead > 0 ? keep_ahead : std::max<int64_t>(shuffle_buffer, 0) + 4 * largest;
  owed_.assign(labels_.size() * static_cast<size_t>(parts_), 0);
  state_.assign(groups_.size(), kUnread);
}

ArrowGroupImages::~ArrowGroupImages() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t ArrowGroupImages::group_of(int64_t i) const { return static_cast<int64_t>(run_of(starts_, i)); }

std::string ArrowGroupImages::name(int64_t i) const {
  const int64_t g = group_of(i);
  return groups_[static_cast<size_t>(g)].name + ", row " + std::to_string(i - starts_[static_cast<size_t>(g)]);
}

std::optional<std::vector<int64_t>> ArrowGroupImages::epoch_order(uint64_t seed, int64_t epoch, int64_t rank,
                                                                  int64_t world_size) const {
  std::vector<int64_t> sizes;
  for (const ArrowGroup& g : groups_) sizes.push_back(g.rows);
  return shard_epoch_order(sizes, {seed, epoch, rank, world_size, shuffle_buffer_});
}

void ArrowGroupImages::reads_planned(const std::vector<int64_t>& indices, size_t from) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++generation_;
    std::fill(owed_.begin(), owed_.end(), 0);
    std::fill(state_.begin(), state_.end(), kUnread);
    kept_.clear(), failed_.clear(), order_.clear(), asked_.clear();
    std::vector<char> seen(groups_.size(), 0);
    for (size_t p = from; p < indices.size(); ++p) {
      const int64_t i = indices[p];
      for (int64_t k = 0; k < parts_; ++k) ++owed_[static_cast<size_t>(i * parts_ + k)];
      const int64_t g = group_of(i);
      if (!seen[static_cast<size_t>(g)]) seen[static_cast<size_t>(g)] = 1, order_.push_back(g);
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { read_loop(); });
  }
  changed_.notify_all();
}

void ArrowGroupImages::reads_cancelled(bool cancelled) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = cancelled;
    if (cancelled) {  // the plan is abandoned: nothing more is read for it, and its kept bytes go
      ++generation_;
      order_.clear(), asked_.clear(), kept_.clear(), failed_.clear();
    }
  }
  changed_.notify_all();
}

int64_t ArrowGroupImages::groups_read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return groups_read_;
}

int64_t ArrowGroupImages::kept() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(kept_.size());
}

std::string_view ArrowGroupImages::part_bytes(int64_t i, int64_t part, std::string& scratch) const {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t slot = i * parts_ + part;
  const int64_t g = group_of(i);
  if (owed_[static_cast<size_t>(slot)] == 0) owed_[static_cast<size_t>(slot)] = 1;  // outside the plan (a replaced
                                                                                     // bad image, a direct call)
  if (!thread_.joinable()) thread_ = std::thread([this] { read_loop(); });
  for (;;) {
    if (cancelled_) throw FetchCancelled(name(i) + ": read cancelled (the loader stopped, or Ctrl-C)");
    if (const auto kept = kept_.find(slot); kept != kept_.end()) {
      if (--owed_[static_cast<size_t>(slot)] > 0) {
        scratch = kept->second;
      } else {
        scratch = std::move(kept->second);
        kept_.erase(kept);
        changed_.notify_all();  // room for the reader to read ahead
      }
      return scratch;
    }
    if (const auto failed = failed_.find(g); failed != failed_.end()) throw InputError(failed->second);
    if (state_[static_cast<size_t>(g)] != kReading) {  // unread, or read before this sample was owed
      state_[static_cast<size_t>(g)] = kUnread;
      if (std::find(asked_.begin(), asked_.end(), g) == asked_.end()) asked_.push_back(g);
      changed_.notify_all();
    }
    changed_.wait(lock);
  }
}

void ArrowGroupImages::read_dropped(int64_t i, int64_t parts_read) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int64_t slot = i * parts_ + std::max<int64_t>(parts_read, 0); slot < (i + 1) * parts_; ++slot)
      if (owed_[static_cast<size_t>(slot)] > 0 && --owed_[static_cast<size_t>(slot)] == 0) kept_.erase(slot);
  }
  changed_.notify_all();  // room for the reader to read ahead
}

bool ArrowGroupImages::has_work() const {
  return !cancelled_ &&
         (!asked_.empty() || (!order_.empty() && static_cast<int64_t>(kept_.size()) < keep_ahead_ * parts_));
}

// Keeps a copy of each image of `group` still owed. With mutex_ held.
void ArrowGroupImages::keep(int64_t group, const Columns& columns) const {
  const int64_t first = starts_[static_cast<size_t>(group)];
  for (int64_t r = 0; r < groups_[static_cast<size_t>(group)].rows; ++r)
    for (int64_t k = 0; k < parts_; ++k) {
      const int64_t slot = (first + r) * parts_ + k;
      if (owed_[static_cast<size_t>(slot)] > 0 && !kept_.count(slot))
        kept_.emplace(slot, std::string(columns[static_cast<size_t>(k)].value(r)));
    }
}

// Keeps `columns` among the groups last read, dropping the oldest beyond cache_bytes_. With mutex_ held.
void ArrowGroupImages::cache(int64_t group, std::shared_ptr<const Columns> columns) const {
  int64_t bytes = 0;
  for (const ArrowBinaryColumn& column : *columns) bytes += column.data_size();
  if (bytes > cache_bytes_ || cached_.count(group)) return;
  cached_bytes_ += bytes;
  cached_.emplace(group, std::move(columns));
  cache_order_.push_back(group);
  while (cached_bytes_ > cache_bytes_) {
    const auto oldest = cached_.find(cache_order_.front());
    for (const ArrowBinaryColumn& column : *oldest->second) cached_bytes_ -= column.data_size();
    cached_.erase(oldest);
    cache_order_.pop_front();
  }
}

// Why the reader's `columns` of `group` are not its images (a column per part, a row per row); empty if they are.
std::string ArrowGroupImages::group_check(int64_t group, const Columns& columns) const {
  const ArrowGroup& g = groups_[static_cast<size_t>(group)];
  if (static_cast<int64_t>(columns.size()) != parts_)
    return g.name + ": " + std::to_string(columns.size()) + " image columns read where " + std::to_string(parts_) +
           " were asked for";
  for (const ArrowBinaryColumn& column : columns)
    if (column.size() != g.rows)
      return g.name + ": " + std::to_string(column.size()) + " images read where its metadata counts " +
             std::to_string(g.rows) + " rows; the file changed while it was read?";
  return "";
}

void ArrowGroupImages::read_loop() const {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || has_work(); });
    if (stopping_) return;
    const bool asked = !asked_.empty();
    const int64_t g = asked ? asked_.front() : order_.front();
    (asked ? asked_ : order_).pop_front();
    if (state_[static_cast<size_t>(g)] != kUnread) continue;  // asked meanwhile, and read or being read
    if (const auto hit = cached_.find(g); hit != cached_.end()) {
      keep(g, *hit->second);
      state_[static_cast<size_t>(g)] = kRead;
      changed_.notify_all();
      continue;
    }
    state_[static_cast<size_t>(g)] = kReading;
    const int64_t generation = generation_;
    lock.unlock();
    std::shared_ptr<const Columns> columns;
    std::string error;
    try {
      columns = std::make_shared<const Columns>(reader_(g));
      error = group_check(g, *columns);
    } catch (const std::exception& e) {
      error = e.what();
    }
    lock.lock();
    if (generation == generation_) {  // else a new plan came: this read is not its
      ++groups_read_;
      if (!error.empty()) {
        failed_[g] = error;
      } else {
        keep(g, *columns);
        cache(g, columns);
      }
      state_[static_cast<size_t>(g)] = kRead;
    } else if (state_[static_cast<size_t>(g)] == kReading) {  // abandoned: read again when asked
      state_[static_cast<size_t>(g)] = kUnread;
    }
    changed_.notify_all();
    lock.unlock();
    columns.reset();  // the producer's release, outside the lock
    lock.lock();
  }
}

} // namespace fastloop
