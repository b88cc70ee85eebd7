// RandomErasing as torchvision.transforms.RandomErasing(p, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0)
// placed after Normalize: with probability p a box of 2-33% of the image, aspect ratio 0.3-3.3, is set
// to 0, the channel mean. Applied to the batch buffer in the loader's threads (and on the device in
// --data-on-device); the draws come from (seed, epoch, index) as the crop's and flip's do.
#pragma once

#include "fastloop/data/codecs/image_decode.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace fastloop {

/// torchvision's RandomErasing.get_params for a height x width image, its uniform draws taken from
/// (seed, epoch, index): an empty box (height 0) when the coin says no or 10 tries found no box that fits.
PixelRect random_erasing_box(double p, int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index);

/// Zeroes the erasing box of each sample of `images` ([count, C, H, W], any layout and float dtype, on any
/// device); sample b's box is drawn for `indices[b]`.
void random_erasing_apply(at::Tensor& images, const int64_t* indices, int64_t count, double p, uint64_t seed,
                          int64_t epoch);

} // namespace fastloop
