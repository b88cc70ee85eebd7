// Decoding of one rectangle of a JPEG, for the training crop. Why the libjpeg API next to TurboJPEG:
// Debian 12's TurboJPEG (libjpeg-turbo 2.1) decodes only whole images (tj3SetCroppingRegion came in 3.0),
// while the libjpeg API of the same library decodes a part (jpeg_crop_scanline, jpeg_skip_scanlines). A
// RandomResizedCrop box covers about half of the image on average, so the inverse DCT, upsampling and
// colour conversion outside it, and the entropy decoding below it, are skipped. Same library, same
// accurate integer IDCT and fancy upsampling as the full decode: the rectangle's pixels equal a full
// decode's (tests/test_image_decode.cpp). Kept apart from image_decode.cpp: libjpeg reports errors by
// longjmp, which this file confines to one C-style function.
#pragma once

#include "fastloop/data/codecs/image_types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

/// How a region decode ended.
enum class JpegRegionStatus { kDone, kCorrupt, kTruncated };

/// One per decoding thread: keeps libjpeg's decompressor (and its memory pools) from image to image.
class JpegRegionDecoder {
 public:
  JpegRegionDecoder();
  ~JpegRegionDecoder();
  JpegRegionDecoder(const JpegRegionDecoder&) = delete;
  JpegRegionDecoder& operator=(const JpegRegionDecoder&) = delete;

  /// Decodes the part of the image, at DCT scale `scale`, that covers `want` (in pixels of the
  /// scaled image) into `out` as RGB rows; `got` is the rectangle decoded (it contains `want`: columns are
  /// widened to libjpeg's iMCU boundaries). On kCorrupt / kTruncated, `error` says what libjpeg reported.
  JpegRegionStatus decode(std::string_view bytes, ImageScale scale, const PixelRect& want, std::vector<uint8_t>& out,
                          PixelRect& got, std::string& error);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Whether the data ends with an EOI marker (0xFFD9), trailing padding allowed: only then can a region
/// decode, which stops below its rectangle, stand in for a full one without missing a truncation.
bool jpeg_ends_with_eoi(std::string_view bytes);

} // namespace fastloop
