// Resizing of uint8 images as torchvision.transforms.v2.functional.resize / resized_crop compute them on
// uint8 tensors: nearest, nearest-exact, bilinear and bicubic, with or without antialias, 1, 3 or 4
// channels. Bilinear with antialias on 3 channels is image_resize.h's kernel (ATen's, bit for bit).
#pragma once

#include "fastloop/data/codecs/image_types.h"
#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/transform.h"

namespace fastloop {

/// The rows [top, top + height) and columns [left, left + width) of `image` resized to out_height x
/// out_width into `out` (v2.functional.resized_crop; the whole image: resize).
void resized_crop_u8(const ImageU8& image, int64_t top, int64_t left, int64_t height, int64_t width,
                     int64_t out_height, int64_t out_width, Interpolation interpolation, bool antialias, ImageU8& out,
                     TransformScratch& scratch);

/// Output pixels `window` of `image` resized whole to out_height x out_width (v2.functional.resize, then crop),
/// written as rows `out_stride` bytes apart from `out`: only the window is computed. Bilinear with antialias on
/// 3 channels and nearest compute the window alone; the other modes resize the whole image first.
void resized_window_u8(const ImageU8& image, int64_t out_height, int64_t out_width, const PixelRect& window,
                       Interpolation interpolation, bool antialias, uint8_t* out, int64_t out_stride,
                       TransformScratch& scratch);

/// InputError for a resize of a height x width image to an empty out_height x out_width (an unchanged size is fine).
void resize_size_check(int64_t height, int64_t width, int64_t out_height, int64_t out_width);

} // namespace fastloop
