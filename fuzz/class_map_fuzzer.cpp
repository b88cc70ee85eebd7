// libFuzzer target for the class-map decoder (data/codecs/class_map): any bytes must give a map of exactly the
// size the header promised (one byte a pixel) or throw InputError; never crash, read out of bounds or
// allocate beyond the pixel limit. Seeds: tests/fuzz_corpus/class_map/ (palette, greyscale and other PNGs).
#include "fastloop/core/errors.h"
#include "fastloop/data/codecs/class_map.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {
constexpr int64_t kClassMapFuzzMaxPixels = int64_t{1} << 20;  // pixels: keeps each execution fast and small
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<uint8_t> pixels;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const fastloop::ClassMapSize got = fastloop::class_map_decode(bytes, "fuzz", pixels, kClassMapFuzzMaxPixels);
    if (got.height <= 0 || got.width <= 0 || got.height * got.width > kClassMapFuzzMaxPixels ||
        pixels.size() != static_cast<size_t>(got.height * got.width))
      std::abort();
    volatile uint8_t last = pixels.back();  // as large as promised
    (void)last;
  } catch (const fastloop::InputError&) {
  }
  return 0;
}
