// Device-resident mode (--data-on-device): the whole uint8 dataset lives in one tensor on the training
// device (CPU memory on CPU), pre-padded for the crop; shuffle, crop, flip and normalize run as batched
// tensor ops (two gathers per batch), with no workers and no host-to-device copy per step.
#pragma once

#include "fastloop/data/loader/loader_options.h"
#include "fastloop/data/sources/dataset.h"

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace fastloop {

/// Same epoch order (sampler_epoch_indices), same per-sample draws (augment_draw) and same normalization
/// table as the threaded Loader, so its batches equal the Loader's for every (seed, epoch); only the
/// arithmetic runs as tensor ops on the device. Reached through Loader with LoaderOptions::on_device.
class DeviceData {
 public:
  DeviceData(const Dataset& dataset, const LoaderOptions& options);

  int64_t batches_per_epoch() const;
  void start_epoch(int64_t epoch, int64_t first_batch = 0);
  std::optional<Batch> next();

 private:
  LoaderOptions options_;
  int64_t size_ = 0, channels_ = 0, height_ = 0, width_ = 0, pad_ = 0;
  at::Tensor images_;   // uint8 [N, C, H + 2 pad, W + 2 pad] on the device, zero border
  at::Tensor labels_;   // int64 [N] on the device
  at::Tensor lut_;      // [C, 256] in the output dtype: normalized value of each pixel value
  at::Tensor order_;    // int64 [M]: this rank's samples in epoch order
  std::vector<int64_t> order_host_;  // the same on the host: the random-erasing draws
  int64_t epoch_ = 0;
  at::Tensor oy_, ox_;  // int64 [M]: crop origin in the padded image, per position
  at::Tensor flip_;     // bool [M]
  int64_t next_batch_ = 0, end_ = 0;
};

} // namespace fastloop
