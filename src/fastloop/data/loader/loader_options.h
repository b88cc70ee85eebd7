// What a Loader is asked for (batch size, workers, augmentation, views, sampler, dtype, layout, device) and what
// it hands back (Batch): shared by the threaded loader and the device-resident mode (device_data.h), which
// the loader owns, so neither includes the other's header.
#pragma once

#include "fastloop/data/loader/sampler.h"
#include "fastloop/data/transforms/augment_options.h"
#include "fastloop/data/transforms/target_batch.h"

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace fastloop {

/// One of several views of each sample (SimCLR, DINO; data/transforms/views.h): its transform pipeline (null:
/// LoaderOptions::augment's) and the size of its images (0: the data set's).
struct LoaderView {
  std::shared_ptr<const Pipeline> pipeline;
  int64_t height = 0, width = 0;  // pixels
  int64_t seed_view = -1;  // ViewTarget::seed_view: the view whose draws it shares (-1: its own)
};

struct LoaderOptions {
  int64_t batch_size = 128;
  int64_t workers = 1;         // 0: assemble in the calling thread
  int64_t prefetch = 4;        // batches assembled ahead of the consumer
  bool drop_last = true;
  AugmentOptions augment;
  SamplerOptions sampler;
  at::ScalarType dtype = at::kFloat;  // kFloat, or kHalf / kBFloat16 when autocast computes in them
  bool channels_last = false;  // images NHWC in memory (sizes stay [B, C, H, W])
  at::Device device = at::kCPU;  // where next() delivers batches
  bool pin_memory = true;      // CUDA device: pinned ring + non_blocking copy on a side stream
  bool on_device = false;      // device-resident mode: whole dataset on `device`, batched tensor ops, no workers
  std::vector<LoaderView> views;  // several views per sample, each decoded once (Batch::views); empty: Batch::images
};

struct Batch {
  at::Tensor images;           // [B, C, H, W], LoaderOptions' dtype, layout and device
  at::Tensor labels;           // int64 [B]
  int64_t index = 0;           // batch number within the epoch
  std::vector<at::Tensor> views;  // LoaderOptions::views: one [B, C, H_v, W_v] per view (images then undefined)
  /// Data with targets (Dataset::targets): each sample's image and targets; `images` stacks the images when
  /// their sizes agree (undefined otherwise), `labels` is undefined.
  std::vector<TargetSample> samples;
  at::Tensor masks;  // with targets: the samples' class maps stacked, uint8 [B, H, W], when each has one of one size
};

} // namespace fastloop
