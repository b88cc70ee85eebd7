// libFuzzer target for image header parsing and decoding (data/image_decode): any bytes must decode to
// an image of the size the header promised, or throw InputError; never crash, read out of bounds or
// allocate beyond the pixel limit. Each input is decoded at full scale and at the 1/8 DCT scale (JPEG), and
// a region of it (libjpeg's cropped decode, data/jpeg_region.cpp) must contain the rectangle asked for.
// Seeds: tests/fuzz_corpus/image_decode/ (small JPEGs and PNGs of every colour type the tests use).
#include "fastloop/core/errors.h"
#include "fastloop/data/image_decode.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace {
constexpr int64_t kFuzzMaxPixels = int64_t{1} << 20;  // pixels: keeps each execution fast and small
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fastloop::ImageDecoder decoder(kFuzzMaxPixels);
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const fastloop::ImageInfo info = decoder.info(bytes, "fuzz");
    for (const fastloop::ImageScale scale : {fastloop::ImageScale{1, 1}, fastloop::ImageScale{1, 8}}) {
      const fastloop::RgbImage image = decoder.decode(bytes, "fuzz", scale);
      const bool scaled = info.format == fastloop::ImageFormat::kJpeg;
      if (image.width != (scaled ? scale.apply(info.width) : info.width) ||
          image.height != (scaled ? scale.apply(info.height) : info.height))
        std::abort();
      volatile uint8_t last = image.data[image.width * image.height * 3 - 1];  // as large as promised
      (void)last;
      // A region from the image's middle to its bottom-right corner, wherever the input puts it.
      const fastloop::PixelRect want{image.height / 3, image.width / 2, image.height - image.height / 3,
                                     image.width - image.width / 2};
      const fastloop::RgbImage part = decoder.decode_region(bytes, "fuzz", info, scale, want);
      if (part.top > want.top || part.left > want.left || part.top + part.height < want.top + want.height ||
          part.left + part.width < want.left + want.width)
        std::abort();
      volatile uint8_t corner = part.data[part.width * part.height * 3 - 1];
      (void)corner;
    }
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
