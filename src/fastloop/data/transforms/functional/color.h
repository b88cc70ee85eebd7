// Colour kernels on uint8 images as torchvision.transforms.v2.functional computes them on uint8 tensors
// (adjust_brightness, adjust_contrast, adjust_saturation, adjust_hue, rgb_to_grayscale, invert, posterize,
// solarize, adjust_sharpness): the same float32 operations in the same order, so each gives torchvision's
// bytes (the parity tests state each kernel's bound). In place; channel rules and messages as torchvision's.
#pragma once

#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/transform.h"

#include <cstdint>

namespace fastloop {

/// v2.functional.adjust_brightness: x * factor, clamped, truncated. 1 or 3 channels; factor >= 0.
void adjust_brightness_u8(ImageU8& image, double brightness_factor);

/// v2.functional.adjust_contrast: a blend with the mean of the (floored) grey image. 1 or 3 channels.
void adjust_contrast_u8(ImageU8& image, double contrast_factor);

/// v2.functional.adjust_saturation: a blend with the floored grey image; a grey image is returned as is.
void adjust_saturation_u8(ImageU8& image, double saturation_factor);

/// v2.functional.adjust_hue (hue.cpp): rgb -> hsv -> h + factor -> rgb in float32; factor in [-0.5, 0.5]; a grey
/// image is returned as is.
void adjust_hue_u8(ImageU8& image, double hue_factor);

/// v2.functional.rgb_to_grayscale: 0.2989 R + 0.587 G + 0.114 B truncated (a grey input is copied or repeated);
/// num_output_channels 1 or 3.
void rgb_to_grayscale_u8(ImageU8& image, int64_t num_output_channels);

/// v2.functional.invert: 255 - x on every channel (alpha too, as torchvision).
void invert_u8(ImageU8& image);

/// v2.functional.posterize: keeps the top `bits` (0..8) bits of every channel.
void posterize_u8(ImageU8& image, int64_t bits);

/// v2.functional.solarize: x >= threshold ? 255 - x : x on every channel; threshold <= 255.
void solarize_u8(ImageU8& image, double threshold);

/// v2.functional.adjust_sharpness (sharpness.cpp): a blend with the 3x3 smoothed image (1s around a 5, / 13, rounded) inside
/// the one-pixel border; images of 2 rows or columns or fewer are returned as is. 1 or 3 channels.
void adjust_sharpness_u8(ImageU8& image, double sharpness_factor, TransformScratch& scratch);

/// torchvision's own checks of the colour kernels, for the transforms' constructors (same messages).
void check_color_channels(int64_t channels, const char* what);  // TypeError unless 1 or 3
void check_non_negative(double factor, const char* name);       // "<name> (<factor>) is not non-negative."
void check_posterize_bits(int64_t bits);                        // TypeError unless 0..8
void check_solarize_threshold(double threshold);                // TypeError above 255

} // namespace fastloop
