// libFuzzer target for BMP and PNM (the hand-written decoders, image_bmp.cpp and image_pnm.cpp): inputs
// of other formats are skipped, so the mutations stay on these decoders (fuzz/image_fuzz.h has the checks). Seeds: tests/fuzz_corpus/image_bmp_pnm/.
#include "image_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fastloop::ImageFormat;
  fastloop::fuzz::image_fuzz_one(data, size, {ImageFormat::kBmp, ImageFormat::kPnm});
  return 0;
}
