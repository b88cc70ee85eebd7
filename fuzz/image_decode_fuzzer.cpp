// libFuzzer target for image header parsing and decoding (data/codecs/image_decode) of every format: the first
// bytes choose the decoder (fuzz/image_fuzz.h has the checks). Seeds: tests/fuzz_corpus/image_decode/
// (small JPEGs and PNGs of every colour type the tests use); image_webp, image_tiff and image_bmp_pnm
// fuzz the other formats from their own seeds.
#include "image_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fastloop::ImageFormat;
  fastloop::fuzz::image_fuzz_one(data, size, {ImageFormat::kJpeg, ImageFormat::kPng, ImageFormat::kWebp, ImageFormat::kBmp,
                                              ImageFormat::kPnm, ImageFormat::kTiff});
  return 0;
}
