// Colour kernels (color.h). torchvision computes these on uint8 tensors in float32 with ATen's vectorised
// kernels, whose add(..., alpha) is a fused multiply-add (vec::fmadd; measured on torch 2.14: the unfused
// form differs from rgb_to_grayscale's floats for 3.7 M of the 16.8 M colours). Each a*b+c below is
// therefore computed in double, where the product and the sum are exact, and rounded once to float:
// the fused result, without needing FMA hardware. Per-value maps are 256-entry tables. The per-pixel
// grey level and blends run first in 32-bit fixed point, which vectorises, and redo in float only the
// pixels whose fixed-point value lies within its error bound of an integer (about 1 in 4,000).
#include "fastloop/data/transforms/functional/color.h"

#include "fastloop/data/transforms/functional/cpu_clones.h"
#include "fastloop/data/transforms/functional/lookup.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace fastloop {
namespace {

/// A double as Python's repr() writes it (0.5, 1.0, 1e-05), for torchvision's messages.
std::string color_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::fabs(v);
  const bool fixed = a == 0 || (a >= 1e-4 && a < 1e16);
  const auto format = fixed ? std::chars_format::fixed : std::chars_format::scientific;
  auto end = std::to_chars(buf, buf + sizeof(buf), v, format).ptr;
  std::string text(buf, end);
  if (fixed && text.find('.') == std::string::npos) text += ".0";
  return text;
}

/// fl(a + alpha * b) rounded once, as ATen's fused add(a, b, alpha).
inline float fused_add(float a, float alpha, float b) {
  return static_cast<float>(static_cast<double>(a) + static_cast<double>(alpha) * static_cast<double>(b));
}

/// A float clamped to [0, 255] and truncated, as clamp_(0, 255).to(torch.uint8).
inline uint8_t clamp_to_u8(float v) {
  return static_cast<uint8_t>(std::min(std::max(v, 0.0f), 255.0f));
}

/// rgb_to_grayscale's float: r.mul(0.2989).add_(g, alpha=0.587).add_(b, alpha=0.114).
inline float grey_float(uint8_t r, uint8_t g, uint8_t b) {
  const float red = static_cast<float>(r) * 0.2989f;
  return fused_add(fused_add(red, 0.587f, static_cast<float>(g)), 0.114f, static_cast<float>(b));
}

// The grey level's fixed point: round(c * 2^23) for rgb_to_grayscale's float32 constants. The fixed-point sum
// is within 4.6e-5 of the exact one and the float32 path within 2e-5; a pixel whose fraction lies within
// 2^10 / 2^23 = 1.2e-4 of an integer is redone in float.
constexpr uint32_t kGreyR = 2507355, kGreyG = 4924113, kGreyB = 956301;  // 0.2989f, 0.587f, 0.114f * 2^23
constexpr uint32_t kGreyNear = 1u << 10, kGreyFrac = (1u << 23) - 1;
constexpr int64_t kChunk = 512;  // pixels per stack buffer of grey levels

/// Floored grey levels of n interleaved RGB pixels; near[i] says pixel i needs the float path.
FASTLOOP_AVX2_CLONES
void grey_levels_fixed(const uint8_t* __restrict p, int64_t n, uint8_t* __restrict grey, uint8_t* __restrict near) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t s = p[3 * i] * kGreyR + p[3 * i + 1] * kGreyG + p[3 * i + 2] * kGreyB;
    const uint32_t frac = s & kGreyFrac;
    grey[i] = static_cast<uint8_t>(s >> 23);
    near[i] = (frac < kGreyNear) | (frac > kGreyFrac - kGreyNear);
  }
}

/// redo(i) for each of the n flags that is set, skipping 8 clear flags at a time (about 1 value in 1,000 is
/// near an integer: most words are clear).
template <typename Redo>
void for_each_flag(const uint8_t* flags, int64_t n, const Redo& redo) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, flags + i, 8);
    if (word == 0) continue;
    for (int64_t k = i; k < i + 8; ++k)
      if (flags[k]) redo(k);
  }
  for (; i < n; ++i)
    if (flags[i]) redo(i);
}

/// Floored grey levels of n (<= kChunk) interleaved RGB pixels, as torchvision's float32 computes them.
void grey_levels(const uint8_t* p, int64_t n, uint8_t* grey) {
  uint8_t near[kChunk];
  grey_levels_fixed(p, n, grey, near);
  for_each_flag(near, n, [&](int64_t i) { grey[i] = static_cast<uint8_t>(grey_float(p[3 * i], p[3 * i + 1], p[3 * i + 2])); });
}

/// _blend(image, other, ratio) for a constant `other`: fused_add(v * ratio, 1 - ratio, other) with the
/// product (1 - ratio) * other, exact in double, computed once; a loop the AVX2 clone vectorises.
FASTLOOP_AVX2_CLONES
void blend_constant_bytes(uint8_t* __restrict p, int64_t n, float ratio, double alpha_other) {
  for (int64_t i = 0; i < n; ++i)
    p[i] = clamp_to_u8(static_cast<float>(static_cast<double>(static_cast<float>(p[i]) * ratio) + alpha_other));
}

void blend_constant(ImageU8& image, float other, double ratio) {
  const double alpha = static_cast<float>(1.0 - ratio);
  const auto r = static_cast<float>(ratio);
  const double alpha_other = alpha * static_cast<double>(other);
  if (lookup_is_vectorised()) {  // the same formula over the 256 values, then a vectorised lookup
    uint8_t table[256];
    for (int v = 0; v < 256; ++v) table[v] = v;
    blend_constant_bytes(table, 256, r, alpha_other);
    return lookup_bytes(image.data(), image.bytes(), 1, table);
  }
  blend_constant_bytes(image.data(), image.bytes(), r, alpha_other);
}

/// x * factor, clamped and truncated, on n bytes (the AVX2 clone vectorises it).
FASTLOOP_AVX2_CLONES
void scale_bytes(uint8_t* __restrict p, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) p[i] = clamp_to_u8(static_cast<float>(p[i]) * factor);
}

// _blend(x, grey, ratio) in fixed point: x * round(ratio * 2^20) + grey * round((1 - ratio) * 2^20), for
// |ratio| <= 4 (|sum| < 2^31). The rounded factors put it within 2.5e-4 of the exact value and float32 within
// 6.1e-5; a value whose fraction lies within 2^9 / 2^20 = 4.9e-4 of an integer is redone in float.
constexpr int32_t kBlendNear = 1 << 9, kBlendFrac = (1 << 20) - 1;

inline uint8_t blend_fixed_u8(int32_t s) {
  return static_cast<uint8_t>(std::min(std::max(s >> 20, 0), 255));
}
inline bool blend_near(int32_t s) {
  const int32_t frac = s & kBlendFrac;
  return frac < kBlendNear || frac > kBlendFrac - kBlendNear;
}

/// The n pixels' channels blended with their grey levels; near[i] says value i needs the float path.
FASTLOOP_AVX2_CLONES
void saturation_fixed(uint8_t* __restrict p, const uint8_t* __restrict grey, int64_t n, int32_t ratio,
                      int32_t alpha, uint8_t* __restrict near) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t g = grey[i] * alpha;
    const int32_t s0 = p[3 * i] * ratio + g, s1 = p[3 * i + 1] * ratio + g, s2 = p[3 * i + 2] * ratio + g;
    near[3 * i] = blend_near(s0);
    near[3 * i + 1] = blend_near(s1);
    near[3 * i + 2] = blend_near(s2);
    p[3 * i] = blend_fixed_u8(s0);
    p[3 * i + 1] = blend_fixed_u8(s1);
    p[3 * i + 2] = blend_fixed_u8(s2);
  }
}

} // namespace

void check_non_negative(double factor, const char* name) {
  if (factor < 0)
    throw InputError(std::string(name) + " (" + color_number(factor) + ") is not non-negative.");
}

void check_color_channels(int64_t channels, const char* what) {
  (void)what;
  if (channels != 1 && channels != 3)
    throw TransformTypeError("Input image tensor permitted channel values are 1 or 3, but found " +
                             std::to_string(channels));
}

void check_posterize_bits(int64_t bits) {
  if (bits < 0 || bits > 8)
    throw TransformTypeError("bits must be a positive integer in the range [0, 8], got " + std::to_string(bits) +
                             " instead.");
}

void check_solarize_threshold(double threshold) {
  if (threshold > 255)
    throw TransformTypeError("Threshold should be less or equal the maximum value of the dtype, but got " +
                             color_number(threshold));
}

void adjust_brightness_u8(ImageU8& image, double brightness_factor) {
  check_non_negative(brightness_factor, "brightness_factor");
  check_color_channels(image.channels, "adjust_brightness");
  const auto factor = static_cast<float>(brightness_factor);
  if (lookup_is_vectorised()) {  // as blend_constant
    uint8_t table[256];
    for (int v = 0; v < 256; ++v) table[v] = v;
    scale_bytes(table, 256, factor);
    return lookup_bytes(image.data(), image.bytes(), 1, table);
  }
  scale_bytes(image.data(), image.bytes(), factor);
}

void adjust_contrast_u8(ImageU8& image, double contrast_factor) {
  check_non_negative(contrast_factor, "contrast_factor");
  check_color_channels(image.channels, "adjust_contrast");
  const int64_t pixels = image.height * image.width;
  if (pixels == 0) return;
  // The mean of integers (floored grey levels): their sum is exact in int64; torch sums in float32, equal
  // while the sum stays below 2^24 (about 66,000 pixels of 255), within an ulp or two above.
  int64_t sum = 0;
  const uint8_t* p = image.data();
  if (image.channels == 3) {
    uint8_t grey[kChunk];
    for (int64_t start = 0; start < pixels; start += kChunk) {
      const int64_t n = std::min(kChunk, pixels - start);
      grey_levels(p + 3 * start, n, grey);
      for (int64_t i = 0; i < n; ++i) sum += grey[i];
    }
  } else {
    for (int64_t i = 0; i < pixels; ++i) sum += p[i];
  }
  const float mean = static_cast<float>(sum) / static_cast<float>(pixels);
  blend_constant(image, mean, contrast_factor);
}

void adjust_saturation_u8(ImageU8& image, double saturation_factor) {
  check_non_negative(saturation_factor, "saturation_factor");
  check_color_channels(image.channels, "adjust_saturation");
  if (image.channels == 1) return;  // torchvision: "Match PIL behaviour"
  const float r = static_cast<float>(saturation_factor);
  const float alpha = static_cast<float>(1.0 - saturation_factor);
  float scaled[256];  // image.mul(ratio)
  for (int v = 0; v < 256; ++v) scaled[v] = static_cast<float>(v) * r;
  const auto exact = [&](uint8_t x, uint8_t grey) { return clamp_to_u8(fused_add(scaled[x], alpha, grey)); };
  const bool fixed = saturation_factor <= 4.0;
  const int32_t ratio_fixed = fixed ? static_cast<int32_t>(std::lround(r * 1048576.0)) : 0;
  const int32_t alpha_fixed = fixed ? static_cast<int32_t>(std::lround(alpha * 1048576.0)) : 0;
  uint8_t grey[kChunk], original[3 * kChunk], near[3 * kChunk];
  const int64_t pixels = image.height * image.width;
  for (int64_t start = 0; start < pixels; start += kChunk) {
    const int64_t n = std::min(kChunk, pixels - start);
    uint8_t* p = image.data() + 3 * start;
    grey_levels(p, n, grey);
    if (fixed) {
      std::memcpy(original, p, 3 * n);
      saturation_fixed(p, grey, n, ratio_fixed, alpha_fixed, near);
      for_each_flag(near, 3 * n, [&](int64_t i) { p[i] = exact(original[i], grey[i / 3]); });
      continue;
    }
    for (int64_t i = 0; i < 3 * n; ++i) p[i] = exact(p[i], grey[i / 3]);
  }
}

void rgb_to_grayscale_u8(ImageU8& image, int64_t num_output_channels) {
  if (num_output_channels != 1 && num_output_channels != 3)
    throw InputError("num_output_channels must be 1 or 3, got " + std::to_string(num_output_channels) + ".");
  const int64_t pixels = image.height * image.width;
  if (image.channels == 1) {
    if (num_output_channels == 1) return;
    image.reshape(image.height, image.width, 3);  // keeps the grey bytes at the front; spread them backwards
    uint8_t* p = image.data();
    for (int64_t i = pixels - 1; i >= 0; --i) p[3 * i] = p[3 * i + 1] = p[3 * i + 2] = p[i];
    return;
  }
  if (image.channels != 3)  // torchvision unpacks r, g, b = image.unbind(-3)
    throw InputError("rgb_to_grayscale: too many values to unpack (expected 3): the image has " +
                     std::to_string(image.channels) + " channels; convert it to RGB first");
  uint8_t grey[kChunk];
  for (int64_t start = 0; start < pixels; start += kChunk) {
    const int64_t n = std::min(kChunk, pixels - start);
    uint8_t* p = image.data() + 3 * start;
    grey_levels(p, n, grey);
    if (num_output_channels == 3) {
      for (int64_t i = 0; i < n; ++i) p[3 * i] = p[3 * i + 1] = p[3 * i + 2] = grey[i];
    } else {
      std::memcpy(image.data() + start, grey, n);  // start <= 3 * start: never ahead of the unread pixels
    }
  }
  if (num_output_channels == 1) image.channels = 1;
}

void invert_u8(ImageU8& image) {
  uint8_t* p = image.data();
  const int64_t n = image.bytes();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(~p[i]);
}

void posterize_u8(ImageU8& image, int64_t bits) {
  check_posterize_bits(bits);
  if (bits >= 8) return;
  const auto mask = static_cast<uint8_t>(((1 << bits) - 1) << (8 - bits));
  uint8_t* p = image.data();
  const int64_t n = image.bytes();
  for (int64_t i = 0; i < n; ++i) p[i] &= mask;
}

namespace {

/// x >= first ? 255 - x : x on n bytes (the AVX2 clone vectorises it).
FASTLOOP_AVX2_CLONES
void solarize_bytes(uint8_t* __restrict p, int64_t n, uint8_t first) {
  for (int64_t i = 0; i < n; ++i) p[i] = p[i] >= first ? static_cast<uint8_t>(255 - p[i]) : p[i];
}

}  // namespace

void solarize_u8(ImageU8& image, double threshold) {
  check_solarize_threshold(threshold);
  int first = 0;  // the first byte value v with v >= threshold (float compare, as the uint8 tensor against it)
  while (first < 256 && !(static_cast<double>(first) >= threshold)) ++first;
  if (first < 256) solarize_bytes(image.data(), image.bytes(), static_cast<uint8_t>(first));
}

} // namespace fastloop
