// grid_sample's float32 arithmetic, restated per output row: the row's source coordinates first (into the
// worker's scratch floats), then one sampling loop per channel count that reads the uint8 image directly
// (torch converts the whole image to float32 and appends a ones channel first; the products are the same
// floats). Operation order follows ATen's vectorised CPU kernel (GridSamplerKernel.cpp: unnormalise
// (g + 1) * size / 2 - 0.5, corner weights nw = s * e ..., the four corners summed left to right) and
// torchvision's blend ((v - fill) * mask + fill), with the fmas torch's build puts there (below): the bytes
// are torch's (tests/test_transforms_geometry.cpp, tests/python/test_transforms_geometry.py).
#include "fastloop/data/transforms/functional/warp.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace fastloop {
namespace {

// The row loops are compiled twice: for the CPU baseline and, where the CPU has them, with AVX2 and FMA
// (std::fma then one instruction instead of glibc's routine; measured 26 -> 9 ms per 375 x 500 bilinear
// rotation here). Both compute the same floats: the only fused operations are the explicit std::fma calls,
// as both are compiled with -ffp-contract=off (GCC contracts a * b + c into an fma in C++ by default).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WARP_INLINE inline __attribute__((always_inline))
#define WARP_EXACT __attribute__((optimize("fp-contract=off")))  // C++ mode would contract otherwise
#define WARP_FAST __attribute__((target("avx2,fma"), optimize("fp-contract=off")))
bool warp_cpu_fast() {
  static const bool fast = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return fast;
}
#else
#define WARP_INLINE inline
#define WARP_EXACT
#define WARP_FAST
bool warp_cpu_fast() { return false; }
#endif

// torch's float32 arithmetic here is fused: its grid is a bmm of (x, y, 1) rows with theta whose BLAS (MKL)
// accumulates round(x * t0), then fma(y, t1, that), then + t2; grid_sample's unnormalisation
// (g + 1) * (size / 2) - 0.5 and its bilinear sum are compiled with contraction into fmas. std::fma rounds
// once as they do (an instruction where the CPU has it, glibc's exact routine otherwise): with plain float
// arithmetic 10-30% of grid values differ by an ulp, which moves nearest's ties at 90-degree rotations.
WARP_INLINE float warp_unnormalize(float g, float half_size) { return std::fma(g + 1.f, half_size, -0.5f); }

WARP_INLINE uint8_t warp_round(float v) { return static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.f, 255.f)); }

// nearbyint (ties to even) by adding and subtracting 1.5 * 2^23: exact for |v| < 2^22, and in plain float
// arithmetic, so the loops around it vectorise (GCC leaves nearbyintf scalar). Beyond 2^22 (no pixel of an
// image the offsets pass takes, see warp_image) the result stays beyond, NaN stays NaN: both are outside.
WARP_INLINE float warp_round_even(float v) {
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

// Bilinear sampling of one output row: `ix`, `iy` are grid_sample's unnormalised source coordinates.
template <int C>
WARP_INLINE void warp_row_bilinear(const ImageU8& image, const float* ix, const float* iy, int64_t n,
                                   const WarpFill& fill, uint8_t* out) {
  const auto W = static_cast<float>(image.width), H = static_cast<float>(image.height);
  const int64_t stride = image.row_bytes();
  const uint8_t* data = image.data();
  for (int64_t i = 0; i < n; ++i, out += C) {
    const float x = ix[i], y = iy[i];
    // Out of reach (or NaN): all four corners outside, every product 0.
    if (!(x > -1.f && x < W && y > -1.f && y < H)) {
      for (int c = 0; c < C; ++c) out[c] = fill.none ? 0 : warp_round(fill.values[c]);
      continue;
    }
    const float x_w = std::floor(x), y_n = std::floor(y);
    const float w = x - x_w, e = 1.f - w, nn = y - y_n, s = 1.f - nn;
    const float nw = s * e, ne = s * w, sw = nn * e, se = nn * w;
    const auto xi = static_cast<int64_t>(x_w), yi = static_cast<int64_t>(y_n);
    const bool west = xi >= 0, east = xi + 1 < image.width, north = yi >= 0, south = yi + 1 < image.height;
    const int64_t at = yi * stride + xi * C;  // the north-west corner; read only where it is inside
    float mask = 0.f;
    if (!fill.none) {
      mask = std::fma(north && east ? 1.f : 0.f, ne, north && west ? nw : 0.f);
      mask = std::fma(south && west ? 1.f : 0.f, sw, mask);
      mask = std::fma(south && east ? 1.f : 0.f, se, mask);
    }
    for (int c = 0; c < C; ++c) {
      const float v_nw = north && west ? static_cast<float>(data[at + c]) : 0.f;
      const float v_ne = north && east ? static_cast<float>(data[at + C + c]) : 0.f;
      const float v_sw = south && west ? static_cast<float>(data[at + stride + c]) : 0.f;
      const float v_se = south && east ? static_cast<float>(data[at + stride + C + c]) : 0.f;
      float v = std::fma(v_ne, ne, v_nw * nw);
      v = std::fma(v_sw, sw, v);
      v = std::fma(v_se, se, v);
      if (!fill.none) {  // three statements: torch's sub_, mul_, add_ (clang would contract one expression)
        const float blended = (v - fill.values[c]) * mask;
        v = blended + fill.values[c];
      }
      out[c] = warp_round(v);
    }
  }
}

template <int C>
WARP_INLINE void warp_fill_pixel(const WarpFill& fill, uint8_t* out) {
  for (int c = 0; c < C; ++c) out[c] = fill.none ? 0 : warp_round(fill.values[c]);
}

// Nearest, pixel by pixel (images of 2^31 bytes or more, whose offsets int32 cannot hold).
template <int C>
WARP_INLINE void warp_row_nearest_wide(const ImageU8& image, const float* ix, const float* iy, int64_t n,
                                       const WarpFill& fill, uint8_t* out) {
  const auto W1 = static_cast<float>(image.width - 1), H1 = static_cast<float>(image.height - 1);
  const int64_t stride = image.row_bytes();
  for (int64_t i = 0; i < n; ++i, out += C) {
    const float x = std::nearbyint(ix[i]), y = std::nearbyint(iy[i]);  // ties to even, as _mm256_round_ps
    if (x >= 0.f && x <= W1 && y >= 0.f && y <= H1) {
      const uint8_t* p = image.data() + static_cast<int64_t>(y) * stride + static_cast<int64_t>(x) * C;
      for (int c = 0; c < C; ++c) out[c] = p[c];
    } else {
      warp_fill_pixel<C>(fill, out);
    }
  }
}

// Nearest in two passes: each output pixel's source byte offset (-1 outside; a branch-free loop the compiler
// vectorises), then runs of consecutive source pixels copied at once. A translation or a shear along x is
// one run per row, a small rotation runs of about 1 / tan(angle) pixels: the same pixels as pixel by pixel.
template <int C>
WARP_INLINE void warp_row_nearest(const ImageU8& image, const float* ix, const float* iy, int64_t n,
                                  const WarpFill& fill, int32_t* offsets, uint8_t* out) {
  if (offsets == nullptr) return warp_row_nearest_wide<C>(image, ix, iy, n, fill, out);
  const auto W1 = static_cast<float>(image.width - 1), H1 = static_cast<float>(image.height - 1);
  const auto stride = static_cast<int32_t>(image.row_bytes());
  const float* __restrict xs = ix;
  const float* __restrict ys = iy;
  int32_t* __restrict at = offsets;
  for (int64_t i = 0; i < n; ++i) {
    const float x = warp_round_even(xs[i]), y = warp_round_even(ys[i]);
    const bool inside = (x >= 0.f) & (x <= W1) & (y >= 0.f) & (y <= H1);  // no branches: vectorises
    const int32_t offset = static_cast<int32_t>(inside ? y : 0.f) * stride + static_cast<int32_t>(inside ? x : 0.f) * C;
    at[i] = inside ? offset : -1;
  }
  const uint8_t* data = image.data();
  for (int64_t i = 0; i < n;) {
    const int32_t start = offsets[i];
    if (start < 0) {
      warp_fill_pixel<C>(fill, out + i * C);
      ++i;
      continue;
    }
    int64_t end = i + 1;
    for (int32_t next = start + C; end < n && offsets[end] == next; next += C) ++end;
    std::memcpy(out + i * C, data + start, static_cast<size_t>((end - i) * C));
    i = end;
  }
}

template <int C>
WARP_INLINE void warp_row(const ImageU8& image, bool bilinear, const float* ix, const float* iy, int64_t n,
                          const WarpFill& fill, int32_t* offsets, uint8_t* out) {
  if (bilinear) {
    warp_row_bilinear<C>(image, ix, iy, n, fill, out);
  } else {
    warp_row_nearest<C>(image, ix, iy, n, fill, offsets, out);
  }
}

// Runs `coordinates(y, ix, iy)` (fills grid_sample's unnormalised source coordinates of output row y) and
// samples each row into `out`.
template <typename Coordinates>
WARP_INLINE void warp_rows(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                           float* iy, int32_t* offsets, const Coordinates& coordinates) {
  for (int64_t y = 0; y < out.height; ++y) {
    coordinates(y, ix, iy);
    switch (image.channels) {
      case 1: warp_row<1>(image, bilinear, ix, iy, out.width, fill, offsets, out.row(y)); break;
      case 3: warp_row<3>(image, bilinear, ix, iy, out.width, fill, offsets, out.row(y)); break;
      case 4: warp_row<4>(image, bilinear, ix, iy, out.width, fill, offsets, out.row(y)); break;
      default: warp_row<2>(image, bilinear, ix, iy, out.width, fill, offsets, out.row(y)); break;
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

template <typename Coordinates>
WARP_FAST void warp_rows_fast(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                              float* iy, int32_t* offsets, const Coordinates& coordinates) {
  warp_rows(image, out, bilinear, fill, ix, iy, offsets, coordinates);
}

template <typename Coordinates>
WARP_EXACT void warp_rows_portable(const ImageU8& image, ImageU8& out, bool bilinear, const WarpFill& fill, float* ix,
                                   float* iy, int32_t* offsets, const Coordinates& coordinates) {
  warp_rows(image, out, bilinear, fill, ix, iy, offsets, coordinates);
}

// Warps `image` into scratch.spare (out_height x out_width), which then becomes the image.
template <typename Coordinates>
void warp_image(ImageU8& image, int64_t out_height, int64_t out_width, Interpolation interpolation,
                const WarpFill& fill, TransformScratch& scratch, const Coordinates& coordinates) {
  ImageU8& out = scratch.spare;
  out.reshape(out_height, out_width, image.channels);
  if (scratch.floats.size() < static_cast<size_t>(2 * out_width))
    scratch.floats.resize(static_cast<size_t>(2 * out_width));
  float* ix = scratch.floats.data();
  float* iy = ix + out_width;
  const bool bilinear = interpolation == Interpolation::kBilinear;
  int32_t* offsets = nullptr;  // nearest's source offsets, where int32 holds them
  constexpr int64_t kRoundExact = int64_t{1} << 22;  // warp_round_even's range
  if (!bilinear && image.bytes() < (int64_t{1} << 31) && image.width < kRoundExact && image.height < kRoundExact) {
    if (scratch.ints.size() < static_cast<size_t>(out_width)) scratch.ints.resize(static_cast<size_t>(out_width));
    offsets = scratch.ints.data();
  }
  if (warp_cpu_fast()) {
    warp_rows_fast(image, out, bilinear, fill, ix, iy, offsets, coordinates);
  } else {
    warp_rows_portable(image, out, bilinear, fill, ix, iy, offsets, coordinates);
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

}  // namespace fastloop

// The unity build compiles the next file into this translation unit: the macros end here.
#undef WARP_INLINE
#undef WARP_EXACT
#undef WARP_FAST
