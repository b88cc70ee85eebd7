// JPEG compression and decompression of a uint8 image, as torchvision.transforms.v2.functional.jpeg computes it
// (torchvision.io.encode_jpeg, then decode_jpeg): libjpeg's defaults at the given quality, run through
// libjpeg-turbo's TurboJPEG API (jpeg.cpp says which settings make it the same encoder and decoder).
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>

namespace fastloop {

/// `image` (1 or 3 channels) encoded at `quality` (1 to 100) and decoded back in place; `scratch.spare`'s
/// buffer holds the encoded bytes. Another channel count throws InputError with torchvision's message.
void jpeg_roundtrip_u8(ImageU8& image, int64_t quality, TransformScratch& scratch);

}  // namespace fastloop
