// Batch assembly straight from uint8 storage with the augmentation fused into the same pass:
// pad + random crop, horizontal flip and per-channel normalization, one write per output value.
#pragma once

#include "fastloop/data/dataset.h"

#include <cstdint>

namespace fastloop {

struct AugmentOptions {
  bool crop = false;      // random crop after zero padding by `pad` pixels (torchvision RandomCrop)
  int64_t pad = 4;        // pixels
  bool flip = false;      // horizontal flip with probability 1/2
};

/// Writes samples `indices[0..count)` of `dataset` into `images` (float32 [count, C, H, W],
/// contiguous) and `labels` (int64 [count]). Random choices derive from (seed, epoch, index) only.
void batch_assemble(const Dataset& dataset, const int64_t* indices, int64_t count, const AugmentOptions& options,
                    uint64_t seed, int64_t epoch, at::Tensor& images, at::Tensor& labels);

} // namespace fastloop
