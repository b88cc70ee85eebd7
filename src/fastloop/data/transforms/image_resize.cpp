// ATen's uint8 antialiased bilinear resize (aten/src/ATen/native/cpu/UpSampleKernel.cpp, weights;
// UpSampleKernelAVXAntialias.h, passes), restated for interleaved RGB rows: the horizontal pass first, each
// output rounded to uint8 ((sum + 2^(p-1)) >> p, clamped), then the vertical pass over those rows. ATen's
// AVX2 and generic paths compute exactly these integers, so the result is theirs bit for bit
// (tests/test_image_resize.cpp). Measured on this repository's 2-core AMD EPYC (AVX-512, where ATen runs its
// AVX2 kernel), 1200 RandomResizedCrop boxes of the photo set to 224 px: 91 us of CPU each here, 145 us in
// at::_upsample_bilinear2d_aa_out, the same bytes; the portable kernels take ~900 us, ATen's generic ~2000.
#include "fastloop/data/transforms/image_resize.h"

#include <c10/util/Exception.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fastloop {
namespace {

// PIL's bilinear ("triangle") filter, as ATen's HelperInterpLinear::aa_filter.
double triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

inline uint8_t rounded(int32_t sum, int precision) {
  return static_cast<uint8_t>(std::clamp(sum >> precision, 0, 255));
}

// The portable kernels (any CPU; the reference for the AVX2 ones). One row of the horizontal pass: output
// columns [x0, x0 + n) from `in`, whose first pixel is box column `in_x`.
void horizontal_row(const uint8_t* in, int64_t in_x, const ResizeTaps& t, int64_t x0, int64_t n, uint8_t* out) {
  const int32_t bias = 1 << (t.precision - 1);
  for (int64_t x = x0; x < x0 + n; ++x, out += 3) {
    const uint8_t* px = in + 3 * (t.first[static_cast<size_t>(x)] - in_x);
    const int16_t* w = t.weights.data() + x * t.taps;
    int32_t r = bias, g = bias, b = bias;
    for (int32_t k = 0; k < t.count[static_cast<size_t>(x)]; ++k, px += 3) {
      r += w[k] * px[0], g += w[k] * px[1], b += w[k] * px[2];
    }
    out[0] = rounded(r, t.precision), out[1] = rounded(g, t.precision), out[2] = rounded(b, t.precision);
  }
}

// One row of the vertical pass: bytes [i0, n) of `count` rows `stride` bytes apart, weighted into `out`.
void vertical_row(const uint8_t* rows, int64_t stride, const int16_t* w, int32_t count, int precision, int64_t i0,
                  int64_t n, uint8_t* out) {
  for (int64_t i = i0; i < n; ++i) {
    int32_t sum = 1 << (precision - 1);
    for (int32_t k = 0; k < count; ++k) sum += w[k] * rows[k * stride + i];
    out[i] = rounded(sum, precision);
  }
}

#if defined(__x86_64__)
// The AVX2 kernels, PIL-SIMD's scheme as ATen has it (UpSampleKernelAVXAntialias.h), compiled for AVX2 in
// these functions only and called only where the CPU has it. Four rows at once, two per 256-bit register
// (one per 128-bit lane), four taps per step: a 16-byte load holds five RGB pixels, and a byte shuffle lines
// up (R_k, R_k+1), (G_k, G_k+1), (B_k, B_k+1) as int16 pairs for one multiply-add against (w_k, w_k+1). Taps
// past count have weight 0 (the weights are zero-padded to a multiple of 4), so it reads up to kOverRead
// bytes past a row's last tap.
__attribute__((target("avx2"))) inline __m256i load2(const uint8_t* a, const uint8_t* b) {  // 16 bytes of two rows
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                 _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
}

__attribute__((target("avx2"))) void horizontal_rows_avx2(const uint8_t* const in[4], int64_t in_x, const ResizeTaps& t,
                                                          int64_t x0, int64_t n, uint8_t* const out[4]) {
  const __m256i pairs01 = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                                           0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1);
  const __m256i pairs23 = _mm256_setr_epi8(6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1,
                                           6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
  const int precision = t.precision;
  const __m256i bias = _mm256_set1_epi32(1 << (precision - 1)), zero = _mm256_setzero_si256();
  const int32_t* first = t.first.data();
  const int32_t* count = t.count.data();
  const int16_t* weights = t.weights.data();
  const int64_t taps = t.taps;
  for (int64_t x = x0; x < x0 + n; ++x) {
    const int64_t offset = 3 * (first[x] - in_x);
    const int16_t* w = weights + x * taps;
    __m256i s01 = bias, s23 = bias;  // rows 0 and 1, rows 2 and 3
    for (int64_t k = 0; k < count[x]; k += 4) {
      const int64_t at = offset + 3 * k;
      const __m256i px01 = load2(in[0] + at, in[1] + at), px23 = load2(in[2] + at, in[3] + at);
      int32_t pair;
      std::memcpy(&pair, w + k, 4);
      const __m256i w01 = _mm256_set1_epi32(pair);
      std::memcpy(&pair, w + k + 2, 4);
      const __m256i w23 = _mm256_set1_epi32(pair);
      s01 = _mm256_add_epi32(s01, _mm256_madd_epi16(_mm256_shuffle_epi8(px01, pairs01), w01));
      s23 = _mm256_add_epi32(s23, _mm256_madd_epi16(_mm256_shuffle_epi8(px23, pairs01), w01));
      s01 = _mm256_add_epi32(s01, _mm256_madd_epi16(_mm256_shuffle_epi8(px01, pairs23), w23));
      s23 = _mm256_add_epi32(s23, _mm256_madd_epi16(_mm256_shuffle_epi8(px23, pairs23), w23));
    }
    // int32 R, G, B, 0 per row -> bytes clamped to [0, 255]: lane 0 holds rows 0 and 2, lane 1 rows 1 and 3
    const __m256i rgb = _mm256_packus_epi16(
        _mm256_packs_epi32(_mm256_srai_epi32(s01, precision), _mm256_srai_epi32(s23, precision)), zero);
    const __m128i lane0 = _mm256_castsi256_si128(rgb), lane1 = _mm256_extracti128_si256(rgb, 1);
    const int32_t px[4] = {_mm_cvtsi128_si32(lane0), _mm_cvtsi128_si32(lane1), _mm_extract_epi32(lane0, 1),
                           _mm_extract_epi32(lane1, 1)};
    const int64_t o = 3 * (x - x0);
    if (x + 1 < x0 + n) {  // 4 bytes: the 4th is the next pixel's, overwritten by it
      for (int r = 0; r < 4; ++r) std::memcpy(out[r] + o, &px[r], 4);
    } else {
      for (int r = 0; r < 4; ++r) std::memcpy(out[r] + o, &px[r], 3);
    }
  }
}

// 32 bytes of the row at a time, taps in pairs: two rows' bytes interleaved as int16, one multiply-add against
// (w_k, w_k+1). The interleave and the packs work within 128-bit lanes, so the bytes come back in order.
__attribute__((target("avx2"))) void vertical_row_avx2(const uint8_t* rows, int64_t stride, const int16_t* w,
                                                       int32_t count, int precision, int64_t n, uint8_t* out) {
  const __m256i zero = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i s0 = _mm256_set1_epi32(1 << (precision - 1)), s1 = s0, s2 = s0, s3 = s0;
    for (int32_t k = 0; k < count; k += 2) {
      const int32_t k1 = k + 1 < count ? k + 1 : k;  // an odd count's last pair: its second weight is 0
      const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + k * stride + i));
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + k1 * stride + i));
      int32_t pair;
      std::memcpy(&pair, w + k, 4);
      const __m256i wk = _mm256_set1_epi32(pair);
      const __m256i lo = _mm256_unpacklo_epi8(a, b), hi = _mm256_unpackhi_epi8(a, b);
      s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_unpacklo_epi8(lo, zero), wk));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_unpackhi_epi8(lo, zero), wk));
      s2 = _mm256_add_epi32(s2, _mm256_madd_epi16(_mm256_unpacklo_epi8(hi, zero), wk));
      s3 = _mm256_add_epi32(s3, _mm256_madd_epi16(_mm256_unpackhi_epi8(hi, zero), wk));
    }
    const __m256i lo16 = _mm256_packs_epi32(_mm256_srai_epi32(s0, precision), _mm256_srai_epi32(s1, precision));
    const __m256i hi16 = _mm256_packs_epi32(_mm256_srai_epi32(s2, precision), _mm256_srai_epi32(s3, precision));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_packus_epi16(lo16, hi16));
  }
  vertical_row(rows, stride, w, count, precision, i, n, out);
}

bool cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }
#else
bool cpu_has_avx2() { return false; }  // other CPUs run the portable kernels; these two are never called
void horizontal_rows_avx2(const uint8_t* const[4], int64_t, const ResizeTaps&, int64_t, int64_t, uint8_t* const[4]) {}
void vertical_row_avx2(const uint8_t*, int64_t, const int16_t*, int32_t, int, int64_t, uint8_t*) {}
#endif

constexpr int64_t kOverRead = 16;  // bytes horizontal_rows_avx2 may read past a row's last tap

// The box rows (or columns) that output pixels [o0, o0 + n) read: [lo, hi).
void taps_span(const ResizeTaps& t, int64_t o0, int64_t n, int64_t& lo, int64_t& hi) {
  lo = t.first[static_cast<size_t>(o0)], hi = lo;
  for (int64_t i = o0; i < o0 + n; ++i) {
    lo = std::min<int64_t>(lo, t.first[static_cast<size_t>(i)]);
    hi = std::max<int64_t>(hi, t.first[static_cast<size_t>(i)] + t.count[static_cast<size_t>(i)]);
  }
}

}  // namespace

void resize_taps_compute(int64_t in_size, int64_t out_size, ResizeTaps& taps) {
  TORCH_CHECK(in_size >= 1 && out_size >= 1, "resize_taps_compute: sizes ", in_size, " -> ", out_size);
  // The double arithmetic below is ATen's, operation for operation (_compute_indices_min_size_weights_aa).
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double support = scale >= 1.0 ? scale : 1.0;  // interp_size / 2 = 1 for bilinear
  const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  const int64_t max_taps = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  const int64_t stride = (max_taps + 3) / 4 * 4;  // zero-padded: the AVX2 kernels take taps 4 or 2 at a time
  std::vector<double> w(static_cast<size_t>(out_size * stride), 0.0);
  taps.taps = stride;
  taps.first.resize(static_cast<size_t>(out_size));
  taps.count.resize(static_cast<size_t>(out_size));
  double wt_max = 0.0;
  for (int64_t i = 0; i < out_size; ++i) {
    const double center = scale * (static_cast<double>(i) + 0.5);
    const int64_t xmin = std::max(static_cast<int64_t>(center - support + 0.5), int64_t{0});
    const int64_t xend = std::min(static_cast<int64_t>(center + support + 0.5), in_size);
    const int64_t xsize = std::clamp(xend - xmin, int64_t{0}, max_taps);
    double* wi = w.data() + i * stride;
    double total = 0.0;
    for (int64_t j = 0; j < xsize; ++j) {
      wi[j] = triangle((static_cast<double>(j + xmin) - center + 0.5) * invscale);
      total += wi[j];
    }
    if (total != 0.0) {
      for (int64_t j = 0; j < xsize; ++j) {
        wi[j] /= total;
        wt_max = std::max(wt_max, wi[j]);
      }
    }
    taps.first[static_cast<size_t>(i)] = static_cast<int32_t>(xmin);
    taps.count[static_cast<size_t>(i)] = static_cast<int32_t>(xsize);
  }
  int precision = 0;  // the most fraction bits that keep the largest weight below 2^15
  for (; precision < 22; ++precision) {
    if (static_cast<int>(0.5 + wt_max * (1 << (precision + 1))) >= (1 << 15)) break;
  }
  taps.precision = precision;
  taps.weights.resize(w.size());
  for (size_t k = 0; k < w.size(); ++k) {
    const double v = w[k] * (1 << precision);
    taps.weights[k] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
  }
  taps.in_size = in_size, taps.out_size = out_size;
}

ImageResizer::ImageResizer(ResizeKernels kernels) : avx2_(kernels == ResizeKernels::kFastest && cpu_has_avx2()) {}

const ResizeTaps& ImageResizer::taps_for(ResizeTaps& slot, int64_t in_size, int64_t out_size) {
  if (slot.in_size != in_size || slot.out_size != out_size) resize_taps_compute(in_size, out_size, slot);
  return slot;
}

PixelRect ImageResizer::source_rect(const PixelRect& box, int64_t out_height, int64_t out_width, const PixelRect& window) {
  int64_t top = window.top, bottom = window.top + window.height, left = window.left, right = window.left + window.width;
  if (box.height != out_height) taps_span(taps_for(vertical_, box.height, out_height), window.top, window.height, top, bottom);
  if (box.width != out_width) taps_span(taps_for(horizontal_, box.width, out_width), window.left, window.width, left, right);
  return {box.top + top, box.left + left, bottom - top, right - left};
}

const uint8_t* ImageResizer::horizontal_pass(const RgbImage& image, const uint8_t* first_row, const PixelRect& src,
                                             const PixelRect& box, const PixelRect& window, int64_t rows) {
  const int64_t in_stride = image.width * 3, row_bytes = window.width * 3;
  // The AVX2 kernel reads up to kOverRead bytes past the source's right edge: rows that end too near the end
  // of the image's memory (its last rows) go through a padded copy.
  const int64_t x_begin = src.left - box.left, read = 3 * src.width;  // box columns [x_begin, ..) are read
  const uint8_t* data_end = image.data + image.height * in_stride;
  padded_.resize(static_cast<size_t>(4 * (read + kOverRead)));
  const auto source_row = [&](int64_t y, int slot) {
    const uint8_t* row = first_row + y * in_stride;
    if (data_end - row >= read + kOverRead) return row;
    uint8_t* copy = padded_.data() + slot * (read + kOverRead);
    std::memcpy(copy, row, static_cast<size_t>(read));
    std::memset(copy + read, 0, kOverRead);
    return static_cast<const uint8_t*>(copy);
  };
  rows_.resize(static_cast<size_t>((rows + 1) * row_bytes));  // + a spare row for the AVX2 kernel
  uint8_t* spare = rows_.data() + rows * row_bytes;
  for (int64_t y = 0; y < rows; y += avx2_ ? 4 : 1) {
    if (!avx2_) {
      horizontal_row(source_row(y, 0), x_begin, horizontal_, window.left, window.width, rows_.data() + y * row_bytes);
      continue;
    }
    const uint8_t* in[4];
    uint8_t* to[4];
    for (int r = 0; r < 4; ++r) {  // past the last row: that row again, into the spare row
      in[r] = y + r < rows ? source_row(y + r, r) : in[0];
      to[r] = y + r < rows ? rows_.data() + (y + r) * row_bytes : spare;
    }
    horizontal_rows_avx2(in, x_begin, horizontal_, window.left, window.width, to);
  }
  return rows_.data();
}

void ImageResizer::resize(const RgbImage& image, const PixelRect& box, int64_t out_height, int64_t out_width,
                          const PixelRect& window, uint8_t* out, int64_t out_stride) {
  TORCH_CHECK(box.height >= 1 && box.width >= 1 && out_height >= 1 && out_width >= 1 && window.top >= 0 &&
                  window.left >= 0 && window.height >= 1 && window.width >= 1 &&
                  window.top + window.height <= out_height && window.left + window.width <= out_width,
              "ImageResizer: box ", box.height, "x", box.width, " to ", out_height, "x", out_width, ", window (",
              window.top, ", ", window.left, ", ", window.height, ", ", window.width, ")");
  const PixelRect src = source_rect(box, out_height, out_width, window);
  TORCH_CHECK(src.top >= image.top && src.left >= image.left && src.top + src.height <= image.top + image.height &&
                  src.left + src.width <= image.left + image.width,
              "ImageResizer: reads rows ", src.top, "+", src.height, ", columns ", src.left, "+", src.width,
              " outside the image part at (", image.top, ", ", image.left, ") of ", image.height, "x", image.width);
  const bool horizontal = box.width != out_width, vertical = box.height != out_height;
  const int64_t in_stride = image.width * 3, row_bytes = window.width * 3;
  // Box pixel (y, x) of the image part (inside src).
  const auto at = [&](int64_t y, int64_t x) {
    return image.data + (box.top + y - image.top) * in_stride + (box.left + x - image.left) * 3;
  };
  const int64_t y0 = src.top - box.top, rows = src.height;  // box rows the vertical pass reads
  // The rows the vertical pass reads: the horizontal pass's, or the image's own.
  const uint8_t* pass1 = horizontal ? horizontal_pass(image, at(y0, src.left - box.left), src, box, window, rows)
                                    : at(y0, window.left);
  const int64_t pass1_stride = horizontal ? row_bytes : in_stride;
  if (!vertical) {
    for (int64_t y = 0; y < window.height; ++y) {
      std::memcpy(out + y * out_stride, pass1 + y * pass1_stride, static_cast<size_t>(row_bytes));
    }
    return;
  }
  for (int64_t y = window.top; y < window.top + window.height; ++y) {
    const auto i = static_cast<size_t>(y);
    const uint8_t* taps_rows = pass1 + (vertical_.first[i] - y0) * pass1_stride;
    const int16_t* w = vertical_.weights.data() + y * vertical_.taps;
    uint8_t* row_out = out + (y - window.top) * out_stride;
    if (avx2_) {
      vertical_row_avx2(taps_rows, pass1_stride, w, vertical_.count[i], vertical_.precision, row_bytes, row_out);
    } else {
      vertical_row(taps_rows, pass1_stride, w, vertical_.count[i], vertical_.precision, 0, row_bytes, row_out);
    }
  }
}

} // namespace fastloop
