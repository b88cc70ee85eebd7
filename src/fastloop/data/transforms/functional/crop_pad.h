// Crop and pad of uint8 images as torchvision.transforms.v2.functional.crop / pad compute them (the same
// bytes): one pass that pads (constant per-channel fill, edge, reflect, symmetric) and crops the padded
// image, which is RandomCrop's pad-then-crop, Pad, and crop's zero fill outside the image, all at once.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// torchvision's padding_mode.
enum class PaddingMode { kConstant, kEdge, kReflect, kSymmetric };

/// "constant", "edge", "reflect" or "symmetric"; anything else throws InputError with torchvision's message.
PaddingMode padding_mode_parse(const std::string& name);
const char* padding_mode_name(PaddingMode mode);

/// Padding in pixels per side, torchvision's [left, top, right, bottom] (negative values crop).
struct Padding {
  int64_t left = 0, top = 0, right = 0, bottom = 0;
};

/// The fill of the constant mode as uint8: `fill` has 1 value or one per channel (empty: 0; another length
/// throws InputError, where torch fails to broadcast); values are truncated toward zero and clamped to
/// [0, 255] (torch's float -> uint8 conversion truncates).
void pad_fill_bytes(const std::vector<double>& fill, int64_t channels, uint8_t out[4]);

/// Pads `image` by `padding` in `mode`, then crops rows [top, top + height) and columns [left, left + width)
/// of the padded image into `out` (any part of the crop outside the padded image is 0, as crop() does).
/// Reflect needs each padding below the image's side and symmetric at most its side (torch's rules):
/// InputError otherwise.
void pad_crop_u8(const ImageU8& image, const Padding& padding, PaddingMode mode, const uint8_t fill[4], int64_t top,
                 int64_t left, int64_t height, int64_t width, ImageU8& out, TransformScratch& scratch);

/// v2.functional.pad(image, padding, fill, padding_mode) into `out`.
void pad_u8(const ImageU8& image, const Padding& padding, PaddingMode mode, const uint8_t fill[4], ImageU8& out,
            TransformScratch& scratch);

/// v2.functional.crop(image, top, left, height, width) into `out` (zero outside the image).
void crop_u8(const ImageU8& image, int64_t top, int64_t left, int64_t height, int64_t width, ImageU8& out,
             TransformScratch& scratch);

}  // namespace fastloop
