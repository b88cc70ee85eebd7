// torchvision's uint8 resize is ATen's: nearest and nearest-exact index maps in float32
// (UpSampleKernel.cpp's HelperInterpNearest / NearestExact), and for bilinear and bicubic the separable uint8
// kernel (upsample_avx_bilinear_bicubic_uint8, which torchvision calls on AVX2 CPUs): int16 weights per axis,
// from PIL's filters with antialias (support scaled by the downscale factor, weights normalised) or from
// torch's own without (2 or 4 taps, those past an edge folded onto it, bicubic with a = -0.75 instead of PIL's
// -0.5); the horizontal pass first, each result rounded to uint8, then the vertical pass. The integers are
// ATen's, so the bytes are its bytes; an axis whose size does not change is copied, as ATen does. The
// common case, bilinear with antialias on RGB, runs image_resize.h's AVX2 kernel (the same integers), one per
// worker thread so that its weights and rows stay allocated: 1.6x faster than these portable passes.
#include "fastloop/data/transforms/functional/resize.h"

#include "fastloop/data/transforms/functional/cpu_clones.h"

#include "fastloop/data/transforms/image_resize.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace fastloop {
namespace {

double resize_triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Keys' cubic convolution (UpSample.h's cubic_convolution1 / 2) with parameter a.
double resize_cubic(double x, double a) {
  x = std::abs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// One axis's taps, in the worker's scratch ints: first[out], count[out], weights[out * taps] (int16 values).
struct AxisTaps {
  int32_t* first = nullptr;
  int32_t* count = nullptr;
  int32_t* weights = nullptr;
  int64_t taps = 0;
  int precision = 0;
};

struct AxisRule {
  bool cubic = false;
  bool antialias = false;
  double scale = 1.0, support = 1.0;
  int64_t max_taps = 2;
  double filter(double x) const {
    if (!cubic) return resize_triangle(x);
    return resize_cubic(x, antialias ? -0.5 : -0.75);
  }
};

AxisRule axis_rule(int64_t in_size, int64_t out_size, bool cubic, bool antialias) {
  AxisRule rule;
  rule.cubic = cubic, rule.antialias = antialias;
  rule.scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const int interp_size = cubic ? 4 : 2;
  if (antialias) {
    rule.support = rule.scale >= 1.0 ? (interp_size * 0.5) * rule.scale : interp_size * 0.5;
    rule.max_taps = static_cast<int64_t>(std::ceil(rule.support)) * 2 + 1;
  } else {
    rule.support = interp_size * 0.5;
    rule.max_taps = interp_size;
  }
  return rule;
}

// The double weights of output pixel i (ATen's _compute_indices_min_size_weights_aa, or without antialias
// _compute_indices_min_size_weights); returns their count, first index in `xmin`, and raises `wt_max` to the
// largest value ATen compares (without antialias: every partial sum of a folded edge tap too).
int64_t axis_weights(const AxisRule& rule, int64_t i, int64_t in_size, double* w, int64_t& xmin, double& wt_max) {
  if (rule.antialias) {
    const double center = rule.scale * (static_cast<double>(i) + 0.5);
    const double invscale = rule.scale >= 1.0 ? 1.0 / rule.scale : 1.0;
    xmin = std::max(static_cast<int64_t>(center - rule.support + 0.5), int64_t{0});
    const int64_t xsize = std::clamp(std::min(static_cast<int64_t>(center + rule.support + 0.5), in_size) - xmin,
                                     int64_t{0}, rule.max_taps);
    double total = 0.0;
    for (int64_t j = 0; j < xsize; ++j) {
      w[j] = rule.filter((static_cast<double>(j + xmin) - center + 0.5) * invscale);
      total += w[j];
    }
    if (total != 0.0) {
      for (int64_t j = 0; j < xsize; ++j) {
        w[j] /= total;
        wt_max = std::max(wt_max, w[j]);
      }
    }
    return xsize;
  }
  // area_pixel_compute_source_index (align_corners=False; linear clamps at 0), then guard_index_and_lambda,
  // whose floorf takes the double as a float.
  double real = rule.scale * (static_cast<double>(i) + 0.5) - 0.5;
  if (!rule.cubic && real < 0) real = 0;
  const int64_t index = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in_size - 1);
  const double lambda = std::min(std::max(real - static_cast<double>(index), 0.0), 1.0);
  const int64_t support = rule.max_taps / 2;
  const int64_t lo = index - support + 1, hi = index + support + 1;
  xmin = std::max(lo, int64_t{0});
  const int64_t xsize = std::clamp(std::min(hi, in_size) - xmin, int64_t{0}, rule.max_taps);
  int64_t at = 0;
  for (int64_t j = 0; j < rule.max_taps; ++j) {  // taps past an edge add onto the edge's
    w[j] = 0.0;
    const double v = rule.filter(static_cast<double>(j + 1 - support) - lambda);
    if (lo + j <= 0) {
      at = 0;
    } else if (lo + j >= in_size - 1) {
      at = xsize - 1;
    }
    w[at] += v;
    wt_max = std::max(wt_max, w[at]);
    ++at;
  }
  return xsize;
}

// Fills `t` (storage from `ints`) for in_size -> out_size; returns the ints used.
int64_t axis_taps(int64_t in_size, int64_t out_size, bool cubic, bool antialias, int32_t* ints, AxisTaps& t) {
  const AxisRule rule = axis_rule(in_size, out_size, cubic, antialias);
  t.taps = rule.max_taps;
  t.first = ints, t.count = ints + out_size, t.weights = ints + 2 * out_size;
  // The weights are computed twice, once for the largest (which sets the precision of the whole axis), once to
  // quantise: no storage beyond one pixel's.
  constexpr int64_t kMaxTaps = 4096;
  if (rule.max_taps > kMaxTaps) {
    throw InputError("resize: " + std::to_string(in_size) + " -> " + std::to_string(out_size) +
                     " pixels is a downscale of more than 1000x on one axis; resize in two steps");
  }
  double w[kMaxTaps];
  double wt_max = 0.0, unused = 0.0;
  for (int64_t i = 0; i < out_size; ++i) {
    int64_t xmin = 0;
    axis_weights(rule, i, in_size, w, xmin, wt_max);
  }
  int precision = 0;
  for (; precision < 22; ++precision) {
    if (static_cast<int>(0.5 + wt_max * (1 << (precision + 1))) >= (1 << 15)) break;
  }
  t.precision = precision;
  for (int64_t i = 0; i < out_size; ++i) {
    int64_t xmin = 0;
    const int64_t n = axis_weights(rule, i, in_size, w, xmin, unused);
    t.first[i] = static_cast<int32_t>(xmin), t.count[i] = static_cast<int32_t>(n);
    int32_t* q = t.weights + i * t.taps;
    for (int64_t j = 0; j < t.taps; ++j) {
      const double v = (j < n ? w[j] : 0.0) * (1 << precision);
      q[j] = static_cast<int16_t>(v < 0 ? static_cast<int>(-0.5 + v) : static_cast<int>(0.5 + v));
    }
  }
  return 2 * out_size + out_size * t.taps;
}

// The passes are compiled for the baseline and for AVX2 (chosen at load time; the same integers).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RESIZE_INLINE inline __attribute__((always_inline))
#else
#define RESIZE_INLINE inline
#endif

RESIZE_INLINE uint8_t resize_clamp(int32_t sum, int precision) {
  return static_cast<uint8_t>(std::clamp(sum >> precision, 0, 255));
}

// Row `in` (pixels from box column 0) -> out_width pixels.
template <int C>
RESIZE_INLINE void resize_row_horizontal(const uint8_t* in, const AxisTaps& t, int64_t out_width, uint8_t* out) {
  const int32_t bias = 1 << (t.precision - 1);
  for (int64_t x = 0; x < out_width; ++x, out += C) {
    const uint8_t* p = in + static_cast<int64_t>(t.first[x]) * C;
    const int32_t* w = t.weights + x * t.taps;
    int32_t acc[C];
    for (int c = 0; c < C; ++c) acc[c] = bias;
    for (int32_t k = 0; k < t.count[x]; ++k, p += C) {
      for (int c = 0; c < C; ++c) acc[c] += w[k] * p[c];
    }
    for (int c = 0; c < C; ++c) out[c] = resize_clamp(acc[c], t.precision);
  }
}

FASTLOOP_AVX2_CLONES void resize_rows_horizontal(const uint8_t* in, int64_t in_stride, int64_t rows, int64_t channels,
                                          const AxisTaps& t, int64_t out_width, uint8_t* out, int64_t out_stride) {
  for (int64_t y = 0; y < rows; ++y) {
    const uint8_t* i = in + y * in_stride;
    uint8_t* o = out + y * out_stride;
    switch (channels) {
      case 1: resize_row_horizontal<1>(i, t, out_width, o); break;
      case 3: resize_row_horizontal<3>(i, t, out_width, o); break;
      case 4: resize_row_horizontal<4>(i, t, out_width, o); break;
      default: resize_row_horizontal<2>(i, t, out_width, o); break;
    }
  }
}

// Output row y of the vertical pass: `rows` (first tap row of the source) `stride` bytes apart; `acc` holds
// `n` int32 sums.
FASTLOOP_AVX2_CLONES void resize_row_vertical(const uint8_t* rows, int64_t stride, const int32_t* w, int32_t count,
                                       int precision, int64_t n, int32_t* acc, uint8_t* out) {
  const int32_t bias = 1 << (precision - 1);
  for (int64_t i = 0; i < n; ++i) acc[i] = bias;
  for (int32_t k = 0; k < count; ++k) {
    const int32_t wk = w[k];
    const uint8_t* r = rows + k * stride;
    for (int64_t i = 0; i < n; ++i) acc[i] += wk * static_cast<int32_t>(r[i]);
  }
  for (int64_t i = 0; i < n; ++i) out[i] = resize_clamp(acc[i], precision);
}

// nearest / nearest-exact: ATen's float32 index of output pixel i.
int64_t nearest_index(int64_t i, int64_t in_size, int64_t out_size, bool exact) {
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  const float real = exact ? scale * (static_cast<float>(i) + 0.5f) - 0.5f : scale * static_cast<float>(i);
  int64_t index;
  if (exact) {
    index = static_cast<int64_t>(std::floor((real < 0.f ? 0.f : real) + 0.5f));
  } else {
    index = static_cast<int64_t>(std::floor(real));
  }
  return std::min(index, in_size - 1);
}

// Output rows `rows` of a nearest resize: output pixel x of a row reads source byte cols[x] of its row.
template <int C>
void nearest_row(const uint8_t* in, const int32_t* cols, int64_t width, uint8_t* out) {
  for (int64_t x = 0; x < width; ++x, out += C) {
    for (int c = 0; c < C; ++c) out[c] = in[cols[x] + c];
  }
}

// Output pixels `window` of the nearest resize of `box` (pixels of `image`) to out_height x out_width, into rows
// `out_stride` bytes apart.
void resize_nearest(const ImageU8& image, const PixelRect& box, int64_t out_height, int64_t out_width,
                    const PixelRect& window, bool exact, uint8_t* out, int64_t out_stride, TransformScratch& scratch) {
  const int64_t C = image.channels;
  if (scratch.ints.size() < static_cast<size_t>(window.width)) scratch.ints.resize(static_cast<size_t>(window.width));
  int32_t* cols = scratch.ints.data();
  for (int64_t x = 0; x < window.width; ++x) {
    const int64_t X = window.left + x;
    cols[x] = static_cast<int32_t>((box.left + (box.width == out_width ? X : nearest_index(X, box.width, out_width, exact))) * C);
  }
  for (int64_t y = 0; y < window.height; ++y) {
    const int64_t Y = window.top + y;
    const uint8_t* in = image.row(box.top + (box.height == out_height ? Y : nearest_index(Y, box.height, out_height, exact)));
    uint8_t* o = out + y * out_stride;
    switch (C) {
      case 1: nearest_row<1>(in, cols, window.width, o); break;
      case 3: nearest_row<3>(in, cols, window.width, o); break;
      case 4: nearest_row<4>(in, cols, window.width, o); break;
      default: nearest_row<2>(in, cols, window.width, o); break;
    }
  }
}

ImageResizer& worker_resizer() {
  thread_local ImageResizer resizer;  // a worker's weights and rows, kept from image to image
  return resizer;
}

}  // namespace

void resized_crop_u8(const ImageU8& image, int64_t top, int64_t left, int64_t height, int64_t width, int64_t out_height,
                     int64_t out_width, Interpolation interpolation, bool antialias, ImageU8& out,
                     TransformScratch& scratch) {
  if (top < 0 || left < 0 || height < 1 || width < 1 || top + height > image.height || left + width > image.width ||
      out_height < 1 || out_width < 1) {
    throw InputError("resized_crop: box (top " + std::to_string(top) + ", left " + std::to_string(left) + ", " +
                     std::to_string(height) + "x" + std::to_string(width) + ") to " + std::to_string(out_height) + "x" +
                     std::to_string(out_width) + " must lie inside the " + std::to_string(image.height) + "x" +
                     std::to_string(image.width) + " image and have positive sizes");
  }
  const int64_t C = image.channels;
  out.reshape(out_height, out_width, C);
  if (interpolation == Interpolation::kNearest || interpolation == Interpolation::kNearestExact) {
    resize_nearest(image, PixelRect{top, left, height, width}, out_height, out_width,
                   PixelRect{0, 0, out_height, out_width}, interpolation == Interpolation::kNearestExact, out.data(),
                   out.row_bytes(), scratch);
    return;
  }
  if (interpolation == Interpolation::kBilinear && antialias && C == 3) {
    const RgbImage rgb{image.data(), image.width, image.height, 0, 0};
    worker_resizer().resize(rgb, PixelRect{top, left, height, width}, out_height, out_width,
                            PixelRect{0, 0, out_height, out_width}, out.data(), out_width * 3);
    return;
  }
  const bool cubic = interpolation == Interpolation::kBicubic;
  const bool horizontal = width != out_width, vertical = height != out_height;
  const int64_t in_stride = image.row_bytes(), out_row = out_width * C;
  const uint8_t* box = image.data() + top * in_stride + left * C;
  if (!horizontal && !vertical) {
    for (int64_t y = 0; y < out_height; ++y) std::memcpy(out.row(y), box + y * in_stride, static_cast<size_t>(out_row));
    return;
  }
  // scratch.ints: both axes' taps, the vertical pass's int32 sums, then the horizontal pass's uint8 rows.
  const auto axis_ints = [&](int64_t in, int64_t o) { return 2 * o + o * axis_rule(in, o, cubic, antialias).max_taps; };
  const int64_t hx = horizontal ? axis_ints(width, out_width) : 0, hy = vertical ? axis_ints(height, out_height) : 0;
  const int64_t pass_rows = vertical ? height : out_height;
  const int64_t pass_bytes = horizontal && vertical ? pass_rows * out_row : 0;
  const auto need = static_cast<size_t>(hx + hy + out_row + (pass_bytes + 3) / 4);
  if (scratch.ints.size() < need) scratch.ints.resize(need);
  AxisTaps tx, ty;
  int32_t* ints = scratch.ints.data();
  if (horizontal) axis_taps(width, out_width, cubic, antialias, ints, tx);
  if (vertical) axis_taps(height, out_height, cubic, antialias, ints + hx, ty);
  int32_t* acc = ints + hx + hy;
  auto* pass = reinterpret_cast<uint8_t*>(acc + out_row);
  if (!vertical) {
    resize_rows_horizontal(box, in_stride, out_height, C, tx, out_width, out.data(), out_row);
    return;
  }
  const uint8_t* rows = box;
  int64_t stride = in_stride;
  if (horizontal) {
    // Only the rows the vertical taps read.
    const int64_t y0 = ty.first[0], y1 = ty.first[out_height - 1] + ty.count[out_height - 1];
    resize_rows_horizontal(box + y0 * in_stride, in_stride, y1 - y0, C, tx, out_width, pass + y0 * out_row, out_row);
    rows = pass, stride = out_row;
  }
  for (int64_t y = 0; y < out_height; ++y) {
    resize_row_vertical(rows + ty.first[y] * stride, stride, ty.weights + y * ty.taps, ty.count[y], ty.precision,
                        out_row, acc, out.row(y));
  }
}

void resized_window_u8(const ImageU8& image, int64_t out_height, int64_t out_width, const PixelRect& window,
                       Interpolation interpolation, bool antialias, uint8_t* out, int64_t out_stride,
                       TransformScratch& scratch) {
  if (window.top < 0 || window.left < 0 || window.height < 1 || window.width < 1 ||
      window.top + window.height > out_height || window.left + window.width > out_width) {
    throw InputError("resized_window: window (top " + std::to_string(window.top) + ", left " +
                     std::to_string(window.left) + ", " + std::to_string(window.height) + "x" +
                     std::to_string(window.width) + ") must lie inside the " + std::to_string(out_height) + "x" +
                     std::to_string(out_width) + " output and have positive sizes");
  }
  const PixelRect box{0, 0, image.height, image.width};
  const int64_t C = image.channels;
  if (interpolation == Interpolation::kNearest || interpolation == Interpolation::kNearestExact) {
    resize_nearest(image, box, out_height, out_width, window, interpolation == Interpolation::kNearestExact, out,
                   out_stride, scratch);
    return;
  }
  if (interpolation == Interpolation::kBilinear && antialias && C == 3) {
    const RgbImage rgb{image.data(), image.width, image.height, 0, 0};
    worker_resizer().resize(rgb, box, out_height, out_width, window, out, out_stride);
    return;
  }
  thread_local ImageU8 whole;  // the portable passes resize whole images: a worker's buffer, kept
  resized_crop_u8(image, 0, 0, image.height, image.width, out_height, out_width, interpolation, antialias, whole,
                  scratch);
  for (int64_t y = 0; y < window.height; ++y)
    std::memcpy(out + y * out_stride, whole.row(window.top + y) + window.left * C, static_cast<size_t>(window.width * C));
}

void resize_size_check(int64_t height, int64_t width, int64_t out_height, int64_t out_width) {
  if (out_height == height && out_width == width) return;
  if (out_height <= 0 || out_width <= 0)
    throw InputError("resize: the output size (" + std::to_string(out_height) + ", " + std::to_string(out_width) +
                     ") of an image of (" + std::to_string(height) + ", " + std::to_string(width) + ") is empty");
}

}  // namespace fastloop

// The unity build compiles the next file into this translation unit: the macros end here.
#undef RESIZE_INLINE
#undef FASTLOOP_AVX2_CLONES
