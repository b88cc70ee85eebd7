// A threaded, prefetching loader over a Dataset (in-memory uint8, or encoded images decoded by the workers). Workers assemble whole batches
// (augmentation fused in) in the requested dtype and layout, on CUDA into a ring of pinned buffers that
// next() copies to the device; batches come out in sampler order whatever the number of workers. With
// LoaderOptions::views, each sample is decoded once and written into every view's batch (one buffer, and on
// CUDA one pinned ring, per view).
// With `on_device`, the DeviceData mode replaces the workers (see device_data.h).
#pragma once

#include "fastloop/core/condition_variable.h"
#include "fastloop/data/loader/batch_buffers.h"
#include "fastloop/data/loader/device_copy.h"
#include "fastloop/data/loader/loader_options.h"
#include "fastloop/data/loader/sampler.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/data/transforms/augment.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace fastloop {

class DeviceData;

/// Batches of one epoch of a `dataset_size` split under `options` (this rank's share, drop_last applied).
int64_t loader_batches_per_epoch(int64_t dataset_size, const LoaderOptions& options);

class Loader {
 public:
  Loader(const Dataset& dataset, LoaderOptions options);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  int64_t batches_per_epoch() const;

  /// Begins `epoch` at batch `first_batch` (non-zero when resuming mid-epoch); stops any previous epoch.
  void start_epoch(int64_t epoch, int64_t first_batch = 0);

  /// Begins `epoch` at `start` in its global order (sampler.h), which this loader's ranks share from there
  /// on (an elastic resume when it was made for another number of ranks); stops any previous epoch. Its
  /// batches are numbered from start.taken / (batch_size * world_size): the numbers a same-sized group
  /// would have given them. The device-resident mode resumes at a batch boundary of the same ranks only.
  void start_epoch(int64_t epoch, const EpochPosition& start);

  /// Where the epoch stands after the batches next() handed out (at most the end of its order): the same
  /// on every rank of the group after as many batches. {taken, order_world_size} as start_epoch takes it
  /// (the threaded mode's; the device-resident mode keeps none).
  EpochPosition position() const;

  /// The batch number next() returns next, and one past the epoch's last (start_epoch's numbering).
  int64_t next_batch() const { return next_to_take_; }
  int64_t end_batch() const { return end_; }

  /// The next batch in order, or nullopt at the end of the epoch. A worker's exception is rethrown here.
  std::optional<Batch> next();

  /// Waits at most `timeout` for next() to have something to return without blocking: the next batch, the
  /// end of the epoch or a worker's error. True when it has (always with 0 workers, which assemble in
  /// next()). Lets a caller that must stay responsive (Python, checking for Ctrl-C) wait in slices.
  bool wait_next(std::chrono::milliseconds timeout);

  /// Stops and joins the workers; batches not taken are dropped.
  void stop();

  /// Undecodable images skipped (and replaced) since start_epoch(): encoded data with skip_bad_images.
  int64_t bad_images_skipped() const { return skipped_.load(); }

  /// Images decoded since start_epoch() (encoded data): one per sample (and image part) whatever the views, plus the
  /// bad images tried. 0 for data held in memory.
  int64_t images_decoded() const { return decoded_.load(); }

 private:
  /// Host buffers of one batch: an images buffer per view (one without views) and the labels.
  struct HostViews {
    std::vector<at::Tensor> images;
    at::Tensor labels;
  };

  Batch assemble(int64_t batch);
  Batch assemble_targets(int64_t batch, int64_t begin, int64_t count);
  void targets_check();
  HostViews ring_acquire(int64_t batch, int64_t count);
  HostViews host_acquire(int64_t count);
  HostViews host_views_empty(int64_t count) const;
  Batch deliver(Batch host);
  void worker_loop();

  const Dataset& dataset_;
  LoaderOptions options_;
  std::vector<BatchLayout> layouts_;      // per view; one without views
  std::vector<std::unique_ptr<PinnedRing>> rings_;  // per view, CUDA + pin_memory only; slot = batch % slots
  std::unique_ptr<DeviceData> resident_;  // on_device only
  std::unique_ptr<BatchBuffers> batch_buffers_;  // data with targets: their batches' memory, recycled
  std::vector<HostViews> kept_;           // CPU batch buffers, reused when only this holds them (mutex_)
  int64_t epoch_ = 0;
  std::vector<int64_t> indices_;  // the samples of batches first_batch_, first_batch_ + 1, ...
  EpochPosition start_;          // where the epoch started (order_world_size resolved)
  int64_t order_size_ = 0;       // positions in the epoch's order
  int64_t first_batch_ = 0;      // the number of the batch indices_ begins with
  int64_t end_ = 0;            // one past the last batch of the epoch
  int64_t next_to_take_ = 0;   // consumer position; advances only after the batch's copy was issued

  std::mutex mutex_;
  std::condition_variable work_ready_;    // workers wait for room in the prefetch window
  std::condition_variable batch_ready_;   // the consumer waits for its batch
  int64_t next_to_make_ = 0;
  bool stopping_ = false;
  std::map<int64_t, Batch> ready_;
  std::exception_ptr error_;
  std::atomic<int64_t> skipped_{0};
  std::atomic<int64_t> decoded_{0};
  std::vector<std::thread> workers_;
};

} // namespace fastloop
