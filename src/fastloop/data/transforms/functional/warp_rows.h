// warp.cpp's row samplers (private to it): grid_sample's nearest and bilinear sampling of one output row from
// its unnormalised source coordinates, each compiled for the CPU baseline and, where the CPU has them, for
// AVX2 and FMA. Included by warp.cpp only; its macros end there.
#pragma once

#include "fastloop/data/transforms/functional/warp_fill.h"
#include "fastloop/data/transforms/image_u8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

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

// Bilinear sampling of one output row, pixel by pixel: `ix`, `iy` are grid_sample's unnormalised source
// coordinates (images whose sides or offsets the two-pass rows below cannot hold).
template <int C>
WARP_INLINE void warp_row_bilinear_wide(const ImageU8& image, const float* ix, const float* iy, int64_t n,
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

// Per-row buffers of the two-pass rows (null where an image is too large for them): nearest's source offsets;
// bilinear's four corner offsets and weights and the fill's mask.
struct WarpRowBuffers {
  int32_t* offsets = nullptr;  // 4 x width
  float* weights = nullptr;    // 5 x width
};

// The taps of a bilinear row: each output pixel's four corner offsets and weights and the fill's mask.
struct BilinearTaps {
  int32_t *o_nw, *o_ne, *o_sw, *o_se;
  float *k_nw, *k_ne, *k_sw, *k_se, *k_mask;
};

// Pixel i's taps. A corner outside the image, or a pixel out of reach (NaN too), gets weight 0 and offset 0:
// the same 0 as grid_sample's zero padding adds. The floats are warp_row_bilinear_wide's, one for one.
WARP_INLINE void bilinear_tap(const float* xs, const float* ys, int64_t i, float W, float H, int32_t width,
                              int32_t height, int32_t stride, int32_t C, const BilinearTaps& t) {
  const bool reach = (xs[i] > -1.f) & (xs[i] < W) & (ys[i] > -1.f) & (ys[i] < H);
  const float x = reach ? xs[i] : 0.f, y = reach ? ys[i] : 0.f;
  const float x_w = std::floor(x), y_n = std::floor(y);
  const float w = x - x_w, e = 1.f - w, nn = y - y_n, s = 1.f - nn;
  const auto xi = static_cast<int32_t>(x_w), yi = static_cast<int32_t>(y_n);
  const bool west = reach & (xi >= 0), east = reach & (xi + 1 < width), north = yi >= 0, south = yi + 1 < height;
  const int32_t at = yi * stride + xi * C;
  t.o_nw[i] = north & west ? at : 0;
  t.o_ne[i] = north & east ? at + C : 0;
  t.o_sw[i] = south & west ? at + stride : 0;
  t.o_se[i] = south & east ? at + stride + C : 0;
  t.k_nw[i] = north & west ? s * e : 0.f;
  t.k_ne[i] = north & east ? s * w : 0.f;
  t.k_sw[i] = south & west ? nn * e : 0.f;
  t.k_se[i] = south & east ? nn * w : 0.f;
  t.k_mask[i] = ((t.k_ne[i] + t.k_nw[i]) + t.k_sw[i]) + t.k_se[i];  // the fmas of 1 x weight: rounded adds
}

WARP_EXACT void bilinear_taps_portable(const float* xs, const float* ys, int64_t n, float W, float H, int32_t width,
                                       int32_t height, int32_t stride, int32_t C, const BilinearTaps& t) {
  for (int64_t i = 0; i < n; ++i) bilinear_tap(xs, ys, i, W, H, width, height, stride, C, t);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// bilinear_tap for 8 pixels at a time (GCC leaves the scalar loop unvectorised: its selections around float
// arithmetic read as control flow); the same operations, so the same floats and offsets.
__attribute__((target("avx2,fma"))) void bilinear_taps_avx2(const float* xs, const float* ys, int64_t n, float W,
                                                            float H, int32_t width, int32_t height, int32_t stride,
                                                            int32_t C, const BilinearTaps& t) {
  const __m256 minus_one = _mm256_set1_ps(-1.f), one = _mm256_set1_ps(1.f);
  const __m256 w_limit = _mm256_set1_ps(W), h_limit = _mm256_set1_ps(H);
  const __m256i none = _mm256_set1_epi32(-1), i_one = _mm256_set1_epi32(1);
  const __m256i i_width = _mm256_set1_epi32(width), i_height = _mm256_set1_epi32(height);
  const __m256i i_stride = _mm256_set1_epi32(stride), i_c = _mm256_set1_epi32(C);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 xv = _mm256_loadu_ps(xs + i), yv = _mm256_loadu_ps(ys + i);
    const __m256 reach = _mm256_and_ps(
        _mm256_and_ps(_mm256_cmp_ps(xv, minus_one, _CMP_GT_OQ), _mm256_cmp_ps(xv, w_limit, _CMP_LT_OQ)),
        _mm256_and_ps(_mm256_cmp_ps(yv, minus_one, _CMP_GT_OQ), _mm256_cmp_ps(yv, h_limit, _CMP_LT_OQ)));
    const __m256 x = _mm256_and_ps(xv, reach), y = _mm256_and_ps(yv, reach);
    const __m256 x_w = _mm256_floor_ps(x), y_n = _mm256_floor_ps(y);
    const __m256 w = _mm256_sub_ps(x, x_w), e = _mm256_sub_ps(one, w);
    const __m256 nn = _mm256_sub_ps(y, y_n), s = _mm256_sub_ps(one, nn);
    const __m256i xi = _mm256_cvttps_epi32(x_w), yi = _mm256_cvttps_epi32(y_n);
    const __m256i in = _mm256_castps_si256(reach);
    const __m256i west = _mm256_and_si256(in, _mm256_cmpgt_epi32(xi, none));
    const __m256i east = _mm256_and_si256(in, _mm256_cmpgt_epi32(i_width, _mm256_add_epi32(xi, i_one)));
    const __m256i north = _mm256_cmpgt_epi32(yi, none);
    const __m256i south = _mm256_cmpgt_epi32(i_height, _mm256_add_epi32(yi, i_one));
    const __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(yi, i_stride), _mm256_mullo_epi32(xi, i_c));
    const __m256i nw = _mm256_and_si256(north, west), ne = _mm256_and_si256(north, east);
    const __m256i sw = _mm256_and_si256(south, west), se = _mm256_and_si256(south, east);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.o_nw + i), _mm256_and_si256(nw, at));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.o_ne + i), _mm256_and_si256(ne, _mm256_add_epi32(at, i_c)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.o_sw + i), _mm256_and_si256(sw, _mm256_add_epi32(at, i_stride)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(t.o_se + i),
                        _mm256_and_si256(se, _mm256_add_epi32(_mm256_add_epi32(at, i_stride), i_c)));
    const __m256 k_nw = _mm256_and_ps(_mm256_mul_ps(s, e), _mm256_castsi256_ps(nw));
    const __m256 k_ne = _mm256_and_ps(_mm256_mul_ps(s, w), _mm256_castsi256_ps(ne));
    const __m256 k_sw = _mm256_and_ps(_mm256_mul_ps(nn, e), _mm256_castsi256_ps(sw));
    const __m256 k_se = _mm256_and_ps(_mm256_mul_ps(nn, w), _mm256_castsi256_ps(se));
    _mm256_storeu_ps(t.k_nw + i, k_nw);
    _mm256_storeu_ps(t.k_ne + i, k_ne);
    _mm256_storeu_ps(t.k_sw + i, k_sw);
    _mm256_storeu_ps(t.k_se + i, k_se);
    _mm256_storeu_ps(t.k_mask + i, _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(k_ne, k_nw), k_sw), k_se));
  }
  for (; i < n; ++i) bilinear_tap(xs, ys, i, W, H, width, height, stride, C, t);
}
#endif

// Bilinear in two passes: the taps of the row (vectorised where the CPU has AVX2), then the per-channel sums,
// which read the corners without a branch.
template <int C>
WARP_INLINE void warp_row_bilinear(const ImageU8& image, const float* ix, const float* iy, int64_t n,
                                   const WarpFill& fill, const WarpRowBuffers& buffers, uint8_t* out) {
  if (buffers.weights == nullptr) return warp_row_bilinear_wide<C>(image, ix, iy, n, fill, out);
  const auto W = static_cast<float>(image.width), H = static_cast<float>(image.height);
  const auto width = static_cast<int32_t>(image.width), height = static_cast<int32_t>(image.height);
  const auto stride = static_cast<int32_t>(image.row_bytes());
  const BilinearTaps t = {buffers.offsets, buffers.offsets + n, buffers.offsets + 2 * n, buffers.offsets + 3 * n,
                          buffers.weights, buffers.weights + n, buffers.weights + 2 * n, buffers.weights + 3 * n,
                          buffers.weights + 4 * n};
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (warp_cpu_fast()) {
    bilinear_taps_avx2(ix, iy, n, W, H, width, height, stride, C, t);
  } else {
    bilinear_taps_portable(ix, iy, n, W, H, width, height, stride, C, t);
  }
#else
  bilinear_taps_portable(ix, iy, n, W, H, width, height, stride, C, t);
#endif
  const int32_t *o_nw = t.o_nw, *o_ne = t.o_ne, *o_sw = t.o_sw, *o_se = t.o_se;
  const float *k_nw = t.k_nw, *k_ne = t.k_ne, *k_sw = t.k_sw, *k_se = t.k_se, *k_mask = t.k_mask;
  const uint8_t* data = image.data();
  for (int64_t i = 0; i < n; ++i, out += C) {
    for (int c = 0; c < C; ++c) {
      float v = std::fma(static_cast<float>(data[o_ne[i] + c]), k_ne[i], static_cast<float>(data[o_nw[i] + c]) * k_nw[i]);
      v = std::fma(static_cast<float>(data[o_sw[i] + c]), k_sw[i], v);
      v = std::fma(static_cast<float>(data[o_se[i] + c]), k_se[i], v);
      if (!fill.none) {  // three statements: torch's sub_, mul_, add_
        const float blended = (v - fill.values[c]) * k_mask[i];
        v = blended + fill.values[c];
      }
      out[c] = static_cast<uint8_t>(std::min(std::max(warp_round_even(v), 0.f), 255.f));
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
                                  const WarpFill& fill, const WarpRowBuffers& buffers, uint8_t* out) {
  int32_t* offsets = buffers.offsets;
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
                          const WarpFill& fill, const WarpRowBuffers& buffers, uint8_t* out) {
  if (bilinear) {
    warp_row_bilinear<C>(image, ix, iy, n, fill, buffers, out);
  } else {
    warp_row_nearest<C>(image, ix, iy, n, fill, buffers, out);
  }
}

}  // namespace
}  // namespace fastloop
