// grid_sample's float32 arithmetic, restated per output row: the row's source coordinates first (into the
// worker's scratch floats), then one sampling loop per channel count that reads the uint8 image directly
// (torch converts the whole image to float32 and appends a ones channel first; the products are the same
// floats). Operation order follows ATen's vectorised CPU kernel (GridSamplerKernel.cpp: unnormalise
// (g + 1) * size / 2 - 0.5, corner weights nw = s * e ..., the four corners summed left to right) and
// torchvision's blend ((v - fill) * mask + fill), with the fmas torch's build puts there (below): the bytes
// are torch's (tests/test_transforms_geometry.cpp, tests/python/test_transforms_geometry.py).
#include "fastloop/data/transforms/functional/warp.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/functional/warp_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace fastloop {
namespace {

// Runs `coordinates(y, ix, iy)` (fills grid_sample's unnormalised source coordinates of output row y) and
// samples each row into `out`.
template <typename Coordinates>
WARP_INLINE void warp_rows(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                           float* iy, const WarpRowBuffers& buffers, const Coordinates& coordinates) {
  for (int64_t y = 0; y < out.height; ++y) {
    coordinates(y, ix, iy);
    switch (image.channels) {
      case 1: warp_row<1>(image, bilinear, ix, iy, out.width, fill, buffers, out.row(y)); break;
      case 3: warp_row<3>(image, bilinear, ix, iy, out.width, fill, buffers, out.row(y)); break;
      case 4: warp_row<4>(image, bilinear, ix, iy, out.width, fill, buffers, out.row(y)); break;
      default: warp_row<2>(image, bilinear, ix, iy, out.width, fill, buffers, out.row(y)); break;
    }
  }
}

// _affine_grid's rows: base x = (1 - ow) / 2 + j, y likewise, times theta's transpose divided by
// (w / 2, h / 2); then grid_sample's unnormalisation.
struct AffineCoordinates {
  float r00, r10, r20, r01, r11, r21, x0, y0, scale_x, scale_y;
  int64_t width;
  WARP_INLINE void operator()(int64_t y, float* __restrict ix, float* __restrict iy) const {
    const AffineCoordinates k = *this;  // locals: the stores below cannot alias them, so the loop vectorises
    const float by = k.y0 + static_cast<float>(y);
    const auto n = static_cast<int32_t>(k.width);  // int32 -> float vectorises on AVX2, int64 -> float does not
    for (int32_t j = 0; j < n; ++j) {
      const float bx = k.x0 + static_cast<float>(j);
      const float gx = std::fma(by, k.r10, bx * k.r00) + k.r20, gy = std::fma(by, k.r11, bx * k.r01) + k.r21;
      ix[j] = warp_unnormalize(gx, k.scale_x);
      iy[j] = warp_unnormalize(gy, k.scale_y);
    }
  }
};

// _perspective_grid's rows: x_out = (a x + b y + c) / (g x + h y + 1) over base x = 0.5 + j, the numerator's
// coefficients divided by (ow / 2, oh / 2), then the quotient minus 1.
struct PerspectiveCoordinates {
  float a, b, c, d, e, f, g, h, scale_x, scale_y;
  int64_t width;
  WARP_INLINE void operator()(int64_t y, float* __restrict ix, float* __restrict iy) const {
    const PerspectiveCoordinates k = *this;  // locals, as AffineCoordinates
    const float by = 0.5f + static_cast<float>(y);
    const auto n = static_cast<int32_t>(k.width);  // as AffineCoordinates
    for (int32_t j = 0; j < n; ++j) {
      const float bx = 0.5f + static_cast<float>(j);
      const float den = std::fma(by, k.h, bx * k.g) + 1.f;
      const float gx = (std::fma(by, k.b, bx * k.a) + k.c) / den - 1.f;
      const float gy = (std::fma(by, k.e, bx * k.d) + k.f) / den - 1.f;
      ix[j] = warp_unnormalize(gx, k.scale_x);
      iy[j] = warp_unnormalize(gy, k.scale_y);
    }
  }
};

// _create_identity_grid's rows plus the displacement field (grid.add_(displacement), one float32 sum), then
// grid_sample's unnormalisation.
struct ElasticCoordinates {
  const float* displacement;  // H x W x 2
  const float* grid_x;        // W
  const float* grid_y;        // H
  float scale_x, scale_y;
  int64_t width;
  WARP_INLINE void operator()(int64_t y, float* __restrict ix, float* __restrict iy) const {
    const ElasticCoordinates k = *this;  // locals, as AffineCoordinates
    const float* d = k.displacement + y * k.width * 2;
    const float by = k.grid_y[y];
    for (int64_t j = 0; j < k.width; ++j) {
      ix[j] = warp_unnormalize(k.grid_x[j] + d[2 * j], k.scale_x);
      iy[j] = warp_unnormalize(by + d[2 * j + 1], k.scale_y);
    }
  }
};

template <typename Coordinates>
WARP_FAST void warp_rows_fast(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                              float* iy, const WarpRowBuffers& buffers, const Coordinates& coordinates) {
  warp_rows(image, out, bilinear, fill, ix, iy, buffers, coordinates);
}

template <typename Coordinates>
WARP_EXACT void warp_rows_portable(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                                   float* iy, const WarpRowBuffers& buffers, const Coordinates& coordinates) {
  warp_rows(image, out, bilinear, fill, ix, iy, buffers, coordinates);
}

// Warps `image` into scratch.spare (out_height x out_width), which then becomes the image.
template <typename Coordinates>
void warp_image(ImageU8& image, int64_t out_height, int64_t out_width, Interpolation interpolation,
                const WarpFill& fill, TransformScratch& scratch, const Coordinates& coordinates) {
  ImageU8& out = scratch.spare;
  out.reshape(out_height, out_width, image.channels);
  const bool bilinear = interpolation == Interpolation::kBilinear;
  constexpr int64_t kRoundExact = int64_t{1} << 22;  // warp_round_even's range
  const bool two_pass = image.bytes() < (int64_t{1} << 31) && image.width < kRoundExact && image.height < kRoundExact;
  const auto width = static_cast<size_t>(out_width);
  const size_t floats = 2 + (two_pass && bilinear ? 5 : 0), ints = two_pass ? (bilinear ? 4 : 1) : 0;
  if (scratch.floats.size() < floats * width) scratch.floats.resize(floats * width);
  if (scratch.ints.size() < ints * width) scratch.ints.resize(ints * width);
  float* ix = scratch.floats.data();
  float* iy = ix + out_width;
  WarpRowBuffers buffers;
  if (two_pass) {
    buffers.offsets = scratch.ints.data();
    if (bilinear) buffers.weights = iy + out_width;
  }
  if (warp_cpu_fast()) {
    warp_rows_fast(image, out, bilinear, fill, ix, iy, buffers, coordinates);
  } else {
    warp_rows_portable(image, out, bilinear, fill, ix, iy, buffers, coordinates);
  }
  std::swap(image, out);
}

}  // namespace

WarpFill warp_fill_make(const std::optional<std::vector<double>>& fill, int64_t channels) {
  WarpFill made;
  if (!fill) {
    made.none = true;
    return made;
  }
  const size_t length = fill->size();
  if (length > 1 && static_cast<int64_t>(length) != channels) {
    throw InputError(
        "The number of elements in 'fill' cannot broadcast to match the number of channels of the image (" +
        std::to_string(length) + " != " + std::to_string(channels) + ")");
  }
  for (int64_t c = 0; c < 4; ++c) {
    made.values[c] =
        length == 0 ? 0.f
                    : static_cast<float>((*fill)[length == 1 ? 0 : static_cast<size_t>(std::min(c, channels - 1))]);
  }
  return made;
}

void warp_interpolation_check(Interpolation interpolation) {
  if (interpolation == Interpolation::kNearest || interpolation == Interpolation::kBilinear) return;
  const char* name = interpolation == Interpolation::kBicubic ? "bicubic" : "nearest-exact";
  throw InputError(std::string("Interpolation mode '") + name + "' is unsupported with Tensor input");
}

void warp_affine_u8(ImageU8& image, const std::array<double, 6>& matrix, int64_t out_height, int64_t out_width,
                    Interpolation interpolation, const WarpFill& fill, TransformScratch& scratch) {
  warp_interpolation_check(interpolation);
  // theta in float32, as torch.tensor(matrix, dtype=float32)
  float theta[6];
  for (int k = 0; k < 6; ++k) theta[k] = static_cast<float>(matrix[static_cast<size_t>(k)]);
  const float half_w = static_cast<float>(0.5 * static_cast<double>(image.width));
  const float half_h = static_cast<float>(0.5 * static_cast<double>(image.height));
  const float r00 = theta[0] / half_w, r10 = theta[1] / half_w, r20 = theta[2] / half_w;
  const float r01 = theta[3] / half_h, r11 = theta[4] / half_h, r21 = theta[5] / half_h;
  const float x0 = static_cast<float>((1.0 - static_cast<double>(out_width)) * 0.5);
  const float y0 = static_cast<float>((1.0 - static_cast<double>(out_height)) * 0.5);
  const float scale_x = static_cast<float>(image.width) / 2.f, scale_y = static_cast<float>(image.height) / 2.f;
  const AffineCoordinates coordinates{r00, r10, r20, r01, r11, r21, x0, y0, scale_x, scale_y, out_width};
  warp_image(image, out_height, out_width, interpolation, fill, scratch, coordinates);
}

void warp_perspective_u8(ImageU8& image, const std::array<double, 8>& coefficients, Interpolation interpolation,
                         const WarpFill& fill, TransformScratch& scratch) {
  warp_interpolation_check(interpolation);
  float k[8];
  for (int i = 0; i < 8; ++i) k[i] = static_cast<float>(coefficients[static_cast<size_t>(i)]);
  const int64_t ow = image.width, oh = image.height;
  const float half_w = static_cast<float>(0.5 * static_cast<double>(ow));
  const float half_h = static_cast<float>(0.5 * static_cast<double>(oh));
  const float a = k[0] / half_w, b = k[1] / half_w, c = k[2] / half_w;
  const float d = k[3] / half_h, e = k[4] / half_h, f = k[5] / half_h;
  const float scale_x = static_cast<float>(image.width) / 2.f, scale_y = static_cast<float>(image.height) / 2.f;
  const PerspectiveCoordinates coordinates{a, b, c, d, e, f, k[6], k[7], scale_x, scale_y, ow};
  warp_image(image, oh, ow, interpolation, fill, scratch, coordinates);
}

void identity_grid_f32(int64_t size, float* out) {
  if (size == 1) {  // torch.linspace's single step is its start
    out[0] = 0.f;
    return;
  }
  const double s = static_cast<double>(size);
  const auto start = static_cast<float>((1.0 - s) / s), end = static_cast<float>((s - 1.0) / s);
  const float step = (end - start) / static_cast<float>(size - 1);
  const int64_t halfway = size / 2;
  for (int64_t i = 0; i < size; ++i) {
    out[i] = i < halfway ? std::fma(step, static_cast<float>(i), start)
                         : std::fma(-step, static_cast<float>(size - i - 1), end);
  }
}

void warp_elastic_u8(ImageU8& image, const float* displacement, const float* grid_x, const float* grid_y,
                     Interpolation interpolation, const WarpFill& fill, TransformScratch& scratch) {
  warp_interpolation_check(interpolation);
  const float scale_x = static_cast<float>(image.width) / 2.f, scale_y = static_cast<float>(image.height) / 2.f;
  const ElasticCoordinates coordinates{displacement, grid_x, grid_y, scale_x, scale_y, image.width};
  warp_image(image, image.height, image.width, interpolation, fill, scratch, coordinates);
}

}  // namespace fastloop

// The unity build compiles the next file into this translation unit: the macros end here.
#undef WARP_INLINE
#undef WARP_EXACT
#undef WARP_FAST
