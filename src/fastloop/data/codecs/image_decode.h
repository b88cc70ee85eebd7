// Decoding of encoded image files (every format torchvision's ImageFolder lists: JPEG, PNG, WebP, BMP,
// PPM/PGM, TIFF) into 8-bit interleaved RGB, the way PIL's Image.open(f).convert("RGB") sees them: JPEG
// with libjpeg-turbo's TurboJPEG API (accurate IDCT, the decoder PIL links), optionally at a reduced DCT
// scale (1/8 ... 1) so a small crop costs a small decode; PNG with libspng, WebP with libwebp, TIFF with
// libtiff (kept C libraries found with pkg-config), BMP and PNM by hand (image_bmp.cpp, image_pnm.cpp).
// No torch types here, so the fuzz target links only these libraries and the decoders.
#pragma once

#include "fastloop/data/codecs/image_types.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fastloop {

class JpegRegionDecoder;

/// PIL refuses images above twice its MAX_IMAGE_PIXELS (a decompression bomb); so do we by default.
constexpr int64_t kImageMaxPixels = 2 * 89478485;  // pixels

/// The smallest of the fast JPEG scales 1, 1/2, 1/4, 1/8 that is at least `min_scale` (1 when min_scale > 1/2).
ImageScale image_scale_at_least(double min_scale);

/// One decoder per thread: it owns a TurboJPEG handle and the pixel buffer decodes land in, reused from
/// image to image (no allocation once the buffer has grown to the largest image). Not thread-safe.
class ImageDecoder {
 public:
  explicit ImageDecoder(int64_t max_pixels = kImageMaxPixels);
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  /// Format and full-scale size from the header alone. Throws InputError naming `name` when the bytes
  /// are in none of the formats above, the header is malformed or describes a layout fastloop does not
  /// decode (e.g. a floating-point TIFF), or the image has more than max_pixels.
  ImageInfo info(std::string_view bytes, const std::string& name);

  /// Decodes to RGB; JPEGs at `scale` (the other formats always at full scale). Truncated or corrupt data throws
  /// InputError naming `name`. The result stays valid until the next decode().
  RgbImage decode(std::string_view bytes, const std::string& name, ImageScale scale = {}) {
    return decode(bytes, name, info(bytes, name), scale);
  }
  /// decode() with the header info() already read from these bytes.
  RgbImage decode(std::string_view bytes, const std::string& name, const ImageInfo& header, ImageScale scale);

  /// As decode(), but may decode only a part that contains `region` (pixels of the image at `scale`): a
  /// JPEG that ends with its EOI marker and is not CMYK. Equal pixels to decode()'s within `region`.
  RgbImage decode_region(std::string_view bytes, const std::string& name, const ImageInfo& header, ImageScale scale,
                         const PixelRect& region);

 private:
  RgbImage jpeg_decode(std::string_view bytes, const std::string& name, const ImageInfo& header, ImageScale scale);
  RgbImage png_decode(std::string_view bytes, const std::string& name);

  /// A new TurboJPEG handle: after a failed call libjpeg-turbo 2.1 leaves its handle in a state where the
  /// next image fails too ("Improper call to JPEG library in state 200"), which skipping a bad image hit.
  void jpeg_restart();

  void* jpeg_ = nullptr;  // tjhandle
  std::unique_ptr<JpegRegionDecoder> region_;
  int64_t max_pixels_;
  std::vector<uint8_t> pixels_;  // the decoded image (RGB)
  std::vector<uint8_t> staging_; // CMYK / 16-bit / TIFF samples before conversion
};

} // namespace fastloop
