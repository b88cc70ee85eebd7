// The body the image decoding fuzz targets share (image_decode_fuzzer.cpp for every format, and one target
// per format family so each gets its own mutations): any bytes must decode to an image of the size the
// header promised, or throw InputError; never crash, read out of bounds or allocate beyond the pixel limit.
#pragma once

#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/image_decode.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

namespace fastloop::fuzz {

constexpr int64_t kImageFuzzMaxPixels = int64_t{1} << 20;  // pixels: keeps each execution fast and small

// Decodes `data` when it is one of `formats`: at full scale and at the 1/8 DCT scale (JPEG), and a region
// of it (libjpeg's cropped decode, data/codecs/jpeg_region.cpp; the other formats decode whole) that must contain
// the rectangle asked for.
inline void image_fuzz_one(const uint8_t* data, size_t size, std::initializer_list<ImageFormat> formats) {
  static ImageDecoder decoder(kImageFuzzMaxPixels);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const ImageInfo info = decoder.info(bytes, "fuzz");
    if (std::find(formats.begin(), formats.end(), info.format) == formats.end()) return;
    for (const ImageScale scale : {ImageScale{1, 1}, ImageScale{1, 8}}) {
      const RgbImage image = decoder.decode(bytes, "fuzz", scale);
      const bool scaled = info.format == ImageFormat::kJpeg;
      if (image.width != (scaled ? scale.apply(info.width) : info.width) ||
          image.height != (scaled ? scale.apply(info.height) : info.height))
        std::abort();
      volatile uint8_t last = image.data[image.width * image.height * 3 - 1];  // as large as promised
      (void)last;
      // A region from the image's middle to its bottom-right corner, wherever the input puts it.
      const PixelRect want{image.height / 3, image.width / 2, image.height - image.height / 3, image.width - image.width / 2};
      const RgbImage part = decoder.decode_region(bytes, "fuzz", info, scale, want);
      if (part.top > want.top || part.left > want.left || part.top + part.height < want.top + want.height ||
          part.left + part.width < want.left + want.width)
        std::abort();
      volatile uint8_t corner = part.data[part.width * part.height * 3 - 1];
      (void)corner;
    }
  } catch (const InputError&) {
  }
}

}  // namespace fastloop::fuzz
