// Loader: a window of `prefetch` batches ahead of the consumer is handed out to worker threads;
// finished batches wait in a map keyed by batch number so they leave in order. With a pinned ring,
// batch k is written into slot k % prefetch: the window never holds two batches of one slot, and a
// batch leaves it only after its copy was issued, so acquire() always finds that copy's event recorded.
#include "fastloop/data/loader/loader.h"

#include "fastloop/core/condition_variable.h"  // loader.h's condition variables wait here
#include "fastloop/core/errors.h"
#include "fastloop/data/loader/device_data.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/video_batch.h"
#include "fastloop/data/transforms/views.h"

#include <ATen/ATen.h>

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fastloop {
namespace {

// The host layout of each view's batches (one layout without views): the data set's size, or the view's own.
std::vector<BatchLayout> view_layouts(const Dataset& dataset, const LoaderOptions& options) {
  const BatchLayout layout{options.batch_size, dataset.channels(), dataset.height(), dataset.width(), options.dtype,
                           options.channels_last};
  if (options.views.empty()) return {layout};
  std::vector<BatchLayout> layouts;
  for (const LoaderView& view : options.views) {
    TORCH_CHECK(view.height >= 0 && view.width >= 0 && (view.height > 0) == (view.width > 0),
                "Loader: a view's size must be both > 0 or both 0 (the data set's), got ", view.height, " x ", view.width);
    layouts.push_back(layout);
    if (view.height > 0) layouts.back().height = view.height, layouts.back().width = view.width;
  }
  return layouts;
}

}  // namespace

Loader::Loader(const Dataset& dataset, LoaderOptions options) : dataset_(dataset), options_(std::move(options)) {
  TORCH_CHECK(options_.batch_size >= 1, "Loader: batch_size must be >= 1, got ", options_.batch_size);
  TORCH_CHECK(options_.prefetch >= 1, "Loader: prefetch must be >= 1, got ", options_.prefetch);
  TORCH_CHECK(options_.workers >= 0, "Loader: workers must be >= 0, got ", options_.workers);
  TORCH_CHECK(dataset_.size() > 0, "Loader: the dataset is empty");
  TORCH_CHECK(options_.dtype == at::kFloat || options_.dtype == at::kHalf || options_.dtype == at::kBFloat16,
              "Loader: dtype must be float32, float16 or bfloat16, got ", options_.dtype);
  if (options_.on_device && dataset_.encoded)
    throw InputError("--data-on-device needs a data set held in memory (IDX, CIFAR, synthetic); image folders and "
                     "shards are decoded by the loader's workers: drop --data-on-device");
  if ((options_.augment.pipeline || !options_.views.empty()) && options_.on_device)
    throw InputError("--data-on-device augments the data set on the device with the built-in crop and flip; a "
                     "transform pipeline or several views run in the loader's workers: drop --data-on-device");
  if (video_clips_of(dataset_) && !options_.views.empty())
    throw InputError("Loader: several views of video clips are not supported; give one transform");
  if (dataset_.targets) {
    targets_check();
    // images and class maps of each batch in flight: queued, being made, held by the consumer
    batch_buffers_ = std::make_unique<BatchBuffers>(2 * static_cast<size_t>(options_.prefetch + options_.workers + 2));
  } else if (options_.augment.pipeline) {
    pipeline_check_output(*options_.augment.pipeline);  // before any worker runs it
  }
  if (options_.augment.pipeline) video_subsample_check(dataset_, *options_.augment.pipeline);
  for (const LoaderView& view : options_.views)
    if (view.pipeline) pipeline_check_output(*view.pipeline), video_subsample_check(dataset_, *view.pipeline);
  layouts_ = view_layouts(dataset_, options_);
  if (options_.on_device) {
    resident_ = std::make_unique<DeviceData>(dataset_, options_);
  } else if (options_.pin_memory && !dataset_.targets && !video_clips_of(dataset_)) {  // targets, clips: own shapes
    for (const BatchLayout& view_layout : layouts_) {
      auto ring = pinned_ring_make(options_.device, options_.prefetch, view_layout);
      if (!ring) break;  // not CUDA
      rings_.push_back(std::move(ring));
    }
  }
}

Loader::~Loader() { stop(); }

// Data with targets: one pipeline (the given one, or ToImage()'s uint8 images as decoded) that moves them.
void Loader::targets_check() {
  if (!options_.views.empty())
    throw InputError("Loader: several views of a data set with boxes and masks are not supported; give one transform");
  if (!options_.augment.pipeline) options_.augment.pipeline = std::make_shared<Pipeline>("ToImage()");
  options_.augment.pipeline->check_targets();
}

int64_t loader_batches_per_epoch(int64_t dataset_size, const LoaderOptions& options) {
  const int64_t world = options.sampler.world_size;
  const int64_t per_rank = (dataset_size + world - 1) / world;
  return options.drop_last ? per_rank / options.batch_size : (per_rank + options.batch_size - 1) / options.batch_size;
}

int64_t Loader::batches_per_epoch() const { return loader_batches_per_epoch(dataset_.size(), options_); }

void Loader::start_epoch(int64_t epoch, int64_t first_batch) {
  const int64_t world = options_.sampler.world_size;
  first_batch = std::clamp<int64_t>(first_batch, 0, batches_per_epoch());
  if (first_batch == batches_per_epoch() && first_batch > 0) {  // past the last batch: nothing left
    stop();
    if (resident_) return resident_->start_epoch(epoch, first_batch);
    epoch_ = epoch, start_ = {first_batch * options_.batch_size * world, world};
    order_size_ = start_.taken;
    indices_.clear();
    ready_.clear();
    error_ = nullptr;
    first_batch_ = end_ = next_to_take_ = next_to_make_ = first_batch;
    return;
  }
  start_epoch(epoch, EpochPosition{first_batch * options_.batch_size * world, world});
}

void Loader::start_epoch(int64_t epoch, const EpochPosition& start) {
  stop();
  const int64_t world = options_.sampler.world_size, step = options_.batch_size * world;
  const EpochPosition resolved{start.taken, start.order_world_size > 0 ? start.order_world_size : world};
  if (resident_) {
    if (resolved.order_world_size != world || resolved.taken % step != 0)
      throw InputError("--data-on-device resumes an epoch at a batch of as many ranks only (position " +
                       std::to_string(start.taken) + " of an epoch of " + std::to_string(resolved.order_world_size) +
                       " ranks, on " + std::to_string(world) + "): drop --data-on-device");
    return resident_->start_epoch(epoch, start.taken / step);
  }
  epoch_ = epoch;
  start_ = resolved;
  indices_ = sampler_epoch_indices(dataset_, epoch, options_.sampler, start_, &order_size_);
  skipped_ = 0;
  decoded_ = 0;
  const auto count = static_cast<int64_t>(indices_.size());
  first_batch_ = start_.taken / step;
  end_ = first_batch_ + (options_.drop_last ? count / options_.batch_size
                                            : (count + options_.batch_size - 1) / options_.batch_size);
  next_to_take_ = next_to_make_ = first_batch_;
  if (dataset_.encoded) dataset_.encoded->reads_planned(indices_, 0);
  ready_.clear();
  error_ = nullptr;
  stopping_ = false;
  for (int64_t w = 0; w < options_.workers && next_to_make_ < end_; ++w) {
    workers_.emplace_back([this] { worker_loop(); });
    pthread_setname_np(workers_.back().native_handle(), "fastloop-loader");  // in top, gdb and the tests
  }
}

EpochPosition Loader::position() const {
  const int64_t step = options_.batch_size * options_.sampler.world_size;
  const int64_t taken = start_.taken + (next_to_take_ - first_batch_) * step;
  return {std::min(taken, std::max(order_size_, start_.taken)), start_.order_world_size};
}

Batch Loader::assemble(int64_t batch) {
  const int64_t begin = (batch - first_batch_) * options_.batch_size;
  const int64_t count = std::min<int64_t>(options_.batch_size, static_cast<int64_t>(indices_.size()) - begin);
  if (dataset_.targets) return assemble_targets(batch, begin, count);
  if (video_clips_of(dataset_)) {  // clips [B, T, C, H, W] (or [B, C, T, H, W]) in fresh tensors, as one view
    Batch out;
    out.index = batch;
    out.views.emplace_back();
    skipped_ += video_batch_assemble(dataset_, indices_.data() + begin, count, options_.augment,
                                     options_.sampler.seed, epoch_, options_.dtype, out.views[0], out.labels);
    decoded_ += count;
    return out;
  }
  HostViews host = rings_.empty() ? host_acquire(count) : ring_acquire(batch, count);
  std::vector<ViewTarget> targets;
  for (size_t v = 0; v < host.images.size(); ++v)
    targets.push_back({options_.views.empty() ? nullptr : options_.views[v].pipeline, host.images[v],
                       options_.views.empty() ? -1 : options_.views[v].seed_view});
  const AssembleCounts counts = batch_views_assemble(dataset_, indices_.data() + begin, count, options_.augment,
                                                     targets, options_.sampler.seed, epoch_, host.labels);
  skipped_ += counts.skipped;
  decoded_ += counts.decoded;
  return {at::Tensor(), host.labels, batch, std::move(host.images), {}, {}};
}

// A batch of samples with targets: a list of samples, their images stacked when their sizes agree (written in
// place when the pipeline fixes the size), their class maps too.
Batch Loader::assemble_targets(int64_t batch, int64_t begin, int64_t count) {
  Batch out;
  out.index = batch;
  TargetStack stack;
  target_batch_assemble(dataset_, indices_.data() + begin, count, *options_.augment.pipeline, options_.sampler.seed,
                        epoch_, out.samples, stack, *batch_buffers_);
  decoded_ += count;
  out.masks = stack.masks;
  if (stack.images.defined()) {
    out.images = stack.images;
    return out;
  }
  std::vector<at::Tensor> images;
  for (const TargetSample& sample : out.samples) {
    if (!images.empty() && !sample.image.sizes().equals(images.front().sizes())) return out;
    images.push_back(sample.image);
  }
  // Copied by memcpy, not at::stack: ATen's parallel copy from a worker thread wakes an OpenMP team whose
  // spinning took a core from the workers (a third of the loader's rate on 2 cores).
  std::vector<int64_t> sizes = images.front().sizes().vec();
  sizes.insert(sizes.begin(), static_cast<int64_t>(images.size()));
  out.images = at::empty(sizes, images.front().options());
  const size_t bytes = images.front().nbytes();
  auto* to = static_cast<uint8_t*>(out.images.data_ptr());
  for (size_t i = 0; i < images.size(); ++i) std::memcpy(to + i * bytes, images[i].const_data_ptr(), bytes);
  for (size_t i = 0; i < out.samples.size(); ++i) out.samples[i].image = out.images[static_cast<int64_t>(i)];
  return out;
}

// Batch k's slot of every view's ring (it waits for the slot's previous copy), the first `count` samples of it.
Loader::HostViews Loader::ring_acquire(int64_t batch, int64_t count) {
  HostViews host;
  for (const auto& ring : rings_) {
    HostBatch slot = ring->acquire(batch % ring->slots());
    host.images.push_back(slot.images.narrow(0, 0, count));
    if (!host.labels.defined()) host.labels = slot.labels.narrow(0, 0, count);  // the first view's ring holds them
  }
  return host;
}

Loader::HostViews Loader::host_views_empty(int64_t count) const {
  HostViews host;
  for (const BatchLayout& layout : layouts_) {
    HostBatch made = host_batch_empty(layout, count);
    host.images.push_back(made.images);
    if (!host.labels.defined()) host.labels = made.labels;
  }
  return host;
}

// CPU batches come from a few full-size buffers that are reused once nobody else holds them. A fresh batch
// (77 MB for 128 x 3 x 224 x 224 float) costs its page faults every time: glibc serves blocks that size with
// mmap in worker threads whatever mallopt says, and on image folders the faults were a fifth of the CPU.
Loader::HostViews Loader::host_acquire(int64_t count) {
  const auto unshared = [](const at::Tensor& t) {  // no other handle and no view (a view is its own TensorImpl)
    return t.use_count() == 1 && t.storage().use_count() == 1;
  };
  const auto all_unshared = [&](const HostViews& kept) {
    return unshared(kept.labels) && std::all_of(kept.images.begin(), kept.images.end(), unshared);
  };
  HostViews host;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const HostViews& kept : kept_) {
      if (all_unshared(kept)) {
        host = kept;  // now shared: no other worker takes it
        break;
      }
    }
    if (!host.labels.defined() && static_cast<int64_t>(kept_.size()) < options_.prefetch + options_.workers + 2) {
      kept_.push_back(host_views_empty(options_.batch_size));
      host = kept_.back();
    }
  }
  if (!host.labels.defined()) return host_views_empty(count);  // all in use: a consumer keeps batches
  for (at::Tensor& images : host.images) images = images.narrow(0, 0, count);
  host.labels = host.labels.narrow(0, 0, count);
  return host;
}

// The batch on options_.device (through the rings on CUDA: one copy per view), as one view's images or views.
Batch Loader::deliver(Batch host) {
  if (dataset_.targets) {
    if (options_.device.is_cpu()) return host;
    const auto moved = [&](const at::Tensor& t) { return t.defined() ? t.to(options_.device) : t; };
    host.images = moved(host.images);
    host.masks = moved(host.masks);
    for (size_t i = 0; i < host.samples.size(); ++i) {
      TargetSample& s = host.samples[i];
      const auto k = static_cast<int64_t>(i);
      s.image = host.images.defined() ? host.images[k] : moved(s.image);
      s.masks = host.masks.defined() ? host.masks[k] : moved(s.masks);
      s.boxes = moved(s.boxes), s.labels = moved(s.labels), s.kept = moved(s.kept);
    }
    return host;
  }
  Batch out{at::Tensor(), host.labels, host.index, {}, {}, {}};
  if (!rings_.empty()) {
    for (const auto& ring : rings_) {
      auto [images, labels] = ring->copy_to_device(host.index % ring->slots(), host.labels.size(0));
      out.views.push_back(images);
      if (out.views.size() == 1) out.labels = labels;
    }
  } else {
    for (const at::Tensor& images : host.views)
      out.views.push_back(options_.device.is_cpu() ? images : images.to(options_.device));
    if (!options_.device.is_cpu()) out.labels = host.labels.to(options_.device);
  }
  if (options_.views.empty()) out.images = std::move(out.views[0]), out.views.clear();
  return out;
}

void Loader::worker_loop() {
  for (;;) {
    int64_t batch = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] {
        return stopping_ || (next_to_make_ < end_ && next_to_make_ < next_to_take_ + options_.prefetch);
      });
      if (stopping_) return;
      batch = next_to_make_++;
    }
    try {
      Batch made = assemble(batch);
      std::lock_guard<std::mutex> lock(mutex_);
      ready_.emplace(batch, std::move(made));
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) {  // a bad input file stays an InputError (exit 2) with the batch it was met in, a store that
                      // stopped answering a RunError (exit 3)
        const std::string what =
            "loader worker, epoch " + std::to_string(epoch_) + ", batch " + std::to_string(batch) + ": " + e.what();
        error_ = dynamic_cast<const InputError*>(&e) ? std::make_exception_ptr(InputError(what))
                 : dynamic_cast<const RunError*>(&e) ? std::make_exception_ptr(RunError(what))
                                                     : std::make_exception_ptr(std::runtime_error(what));
      }
      stopping_ = true;
      work_ready_.notify_all();
    }
    batch_ready_.notify_all();
  }
}

bool Loader::wait_next(std::chrono::milliseconds timeout) {
  if (resident_ || workers_.empty() || next_to_take_ >= end_) return true;
  std::unique_lock<std::mutex> lock(mutex_);
  return batch_ready_.wait_for(lock, timeout, [&] { return error_ || ready_.count(next_to_take_) > 0; });
}

std::optional<Batch> Loader::next() {
  if (resident_) return resident_->next();
  if (next_to_take_ >= end_) return std::nullopt;
  Batch host;
  if (workers_.empty()) {
    try {
      host = assemble(next_to_take_);
    } catch (const InputError& e) {
      throw InputError("loader, epoch " + std::to_string(epoch_) + ", batch " + std::to_string(next_to_take_) + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error("loader, epoch " + std::to_string(epoch_) + ", batch " +
                               std::to_string(next_to_take_) + ": " + e.what());
    }
  } else {
    std::unique_lock<std::mutex> lock(mutex_);
    batch_ready_.wait(lock, [&] { return error_ || ready_.count(next_to_take_) > 0; });
    if (error_) {
      auto error = error_;
      lock.unlock();
      stop();
      std::rethrow_exception(error);
    }
    host = std::move(ready_.extract(next_to_take_).mapped());
  }
  Batch out = deliver(std::move(host));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++next_to_take_;  // only now may a worker reuse this batch's ring slot
  }
  work_ready_.notify_all();
  return out;
}

void Loader::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (dataset_.encoded && !workers_.empty()) dataset_.encoded->reads_cancelled(true);  // a worker may wait on a fetch
  for (auto& worker : workers_) worker.join();
  if (dataset_.encoded && !workers_.empty()) dataset_.encoded->reads_cancelled(false);
  workers_.clear();
}

} // namespace fastloop
