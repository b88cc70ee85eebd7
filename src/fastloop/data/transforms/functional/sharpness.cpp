// adjust_sharpness_u8 (color.h) as torchvision.transforms.v2.functional.adjust_sharpness computes it on uint8:
// conv2d with 1s around a 5, / 13, round_(), clamped; the one-pixel border kept; then _blend with the image
// (image + (1 - factor) * (blurred - image), ATen's fused add: exact in double, rounded once to float).
#include "fastloop/data/transforms/functional/color.h"

#include "fastloop/data/transforms/functional/cpu_clones.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

namespace fastloop {
namespace {

/// Bytes [c, n - c) of one output row from rows up, mid and down of `c` interleaved channels; a loop the
/// AVX2 clone vectorises (8 values per step).
FASTLOOP_AVX2_CLONES
void sharpness_row(const uint8_t* __restrict up, const uint8_t* __restrict mid, const uint8_t* __restrict down,
                   uint8_t* __restrict out, int64_t c, int64_t n, double alpha) {
  for (int64_t x = c; x < n - c; ++x) {
    // The exact blurred value is an integer / 13, never half-way, so float32's sum rounds as the integers
    // do: (s + 6) / 13.
    const int s = up[x - c] + up[x] + up[x + c] + mid[x - c] + 5 * mid[x] + mid[x + c] + down[x - c] + down[x] +
                  down[x + c];
    const int blurred = (s + 6) / 13;
    const auto v = static_cast<float>(static_cast<double>(mid[x]) + alpha * static_cast<double>(blurred - mid[x]));
    out[x] = static_cast<uint8_t>(std::min(std::max(v, 0.0f), 255.0f));  // clamp_(0, 255).to(uint8)
  }
}

}  // namespace

void adjust_sharpness_u8(ImageU8& image, double sharpness_factor, TransformScratch& scratch) {
  if (image.channels != 1 && image.channels != 3)
    throw TransformTypeError("Input image tensor can have 1 or 3 channels, but found " +
                             std::to_string(image.channels));
  check_non_negative(sharpness_factor, "sharpness_factor");
  const int64_t h = image.height, w = image.width, c = image.channels;
  if (h <= 2 || w <= 2) return;
  const double alpha = static_cast<float>(1.0 - sharpness_factor);  // the ratio's float32, exact in double
  ImageU8& out = scratch.spare;
  out.reshape(h, w, c);
  const int64_t stride = w * c;
  std::memcpy(out.row(0), image.row(0), stride);
  std::memcpy(out.row(h - 1), image.row(h - 1), stride);
  for (int64_t y = 1; y < h - 1; ++y) {
    const uint8_t* mid = image.row(y);
    uint8_t* o = out.row(y);
    std::memcpy(o, mid, c);
    std::memcpy(o + stride - c, mid + stride - c, c);
    sharpness_row(image.row(y - 1), mid, image.row(y + 1), o, c, stride, alpha);
  }
  std::swap(image, out);
}

}  // namespace fastloop
