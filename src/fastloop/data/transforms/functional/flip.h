// Horizontal and vertical flips of uint8 images in place, as torchvision.transforms.v2.functional's
// horizontal_flip / vertical_flip compute them (the same bytes: a flip moves pixels, it computes nothing).
#pragma once

#include "fastloop/data/transforms/image_u8.h"

namespace fastloop {

/// Mirrors each row of `image` (v2.functional.horizontal_flip).
void horizontal_flip_u8(ImageU8& image);

/// Mirrors the order of the rows of `image` (v2.functional.vertical_flip).
void vertical_flip_u8(ImageU8& image);

}  // namespace fastloop
