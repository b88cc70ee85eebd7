// RandomErasing's parameters line by line as torchvision's get_params (v1 and v2 alike): the coin first,
// then up to 10 tries of an area fraction and a log-uniform aspect ratio, h = round(sqrt(area * ratio)),
// w = round(sqrt(area / ratio)), kept only when strictly inside the image, then its top-left corner.
#include "fastloop/data/transforms/random_erasing.h"

#include "fastloop/data/transforms/draws.h"
#include "fastloop/data/loader/sampler.h"

#include <ATen/ATen.h>

namespace fastloop {
namespace {

constexpr double kEraseAreaMin = 0.02, kEraseAreaMax = 0.33;  // of the image's area
constexpr double kEraseRatioMin = 0.3, kEraseRatioMax = 3.3;    // height / width
constexpr int kEraseTries = 10;
constexpr uint64_t kEraseSalt = 0xe7a5;

}  // namespace

PixelRect random_erasing_box(double p, int64_t height, int64_t width, uint64_t seed, int64_t epoch, int64_t index) {
  Draws draws(hash_mix(seed ^ kEraseSalt, static_cast<uint64_t>(epoch), static_cast<uint64_t>(index)));
  if (!(draws.uniform(0.0, 1.0) < p)) return {};
  const double area = static_cast<double>(height * width);
  for (int t = 0; t < kEraseTries; ++t) {
    const auto [h, w] = box_sides_draw(draws, area, kEraseAreaMin, kEraseAreaMax, kEraseRatioMin, kEraseRatioMax);
    if (!(h < height && w < width)) continue;
    const int64_t top = draws.below(height - h + 1);
    return {top, draws.below(width - w + 1), h, w};
  }
  return {};
}

void random_erasing_apply(at::Tensor& images, const int64_t* indices, int64_t count, double p, uint64_t seed,
                          int64_t epoch) {
  if (p <= 0) return;
  const int64_t height = images.size(2), width = images.size(3);
  for (int64_t b = 0; b < count; ++b) {
    const PixelRect box = random_erasing_box(p, height, width, seed, epoch, indices[b]);
    if (box.height > 0 && box.width > 0)
      images[b].narrow(1, box.top, box.height).narrow(2, box.left, box.width).zero_();
  }
}

} // namespace fastloop
