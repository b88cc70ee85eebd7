// The plain types the image decoders share (format, header info, DCT scale, pixel rectangle, a decoded
// RGB view): their own header, so the per-format decoders and the JPEG region decoder need not include
// ImageDecoder's, which includes theirs.
#pragma once

#include <cstdint>

namespace fastloop {

enum class ImageFormat { kJpeg, kPng, kWebp, kBmp, kPnm, kTiff };

struct ImageInfo {
  ImageFormat format = ImageFormat::kJpeg;
  int64_t width = 0;   // pixels, of the full-scale image
  int64_t height = 0;  // pixels
  bool cmyk = false;   // a CMYK / YCCK JPEG
};

/// A JPEG DCT scaling factor num/denom (libjpeg-turbo offers n/8 for n = 1..16).
struct ImageScale {
  int num = 1;
  int denom = 1;
  /// ceil(dim * num / denom): the decoded size of a `dim`-pixel side at this scale (TJSCALED).
  int64_t apply(int64_t dim) const { return (dim * num + denom - 1) / denom; }
};

/// A rectangle of an image in pixels: rows [top, top + height), columns [left, left + width).
struct PixelRect {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

/// A decoded image, or the part of it a region decode made: height x width x 3 bytes (RGB, row-major),
/// pointing into its decoder's buffer; its first pixel is pixel (top, left) of the whole decoded image.
struct RgbImage {
  const uint8_t* data = nullptr;
  int64_t width = 0;
  int64_t height = 0;
  int64_t top = 0;
  int64_t left = 0;
};

} // namespace fastloop
