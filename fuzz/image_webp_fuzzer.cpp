// libFuzzer target for WebP (libwebp + libwebpdemux; still, alpha, lossless and animated files): inputs
// of other formats are skipped, so the mutations stay on this decoder (fuzz/image_fuzz.h has the checks).
// Seeds: tests/fuzz_corpus/image_webp/.
#include "image_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fastloop::ImageFormat;
  fastloop::fuzz::image_fuzz_one(data, size, {ImageFormat::kWebp});
  return 0;
}
