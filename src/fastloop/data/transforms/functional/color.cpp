// Colour kernels (color.h). torchvision computes these on uint8 tensors in float32 with ATen's vectorised
// kernels, whose add(..., alpha) is a fused multiply-add (vec::fmadd; measured on torch 2.14: the unfused
// form differs from rgb_to_grayscale's floats for 3.7 M of the 16.8 M colours). Each a*b+c below is
// therefore computed in double, where the product and the sum are exact, and rounded once to float:
// the fused result, without needing FMA hardware. Per-value maps are 256-entry tables.
#include "fastloop/data/transforms/functional/color.h"

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
  auto end = std::to_chars(buf, buf + sizeof(buf), v, fixed ? std::chars_format::fixed : std::chars_format::scientific).ptr;
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

void apply_table(ImageU8& image, const uint8_t* table) {
  uint8_t* p = image.data();
  const int64_t n = image.bytes();
  for (int64_t i = 0; i < n; ++i) p[i] = table[p[i]];
}

/// _blend(image, other, ratio) for a constant `other`: a table over the 256 values.
void blend_constant(ImageU8& image, float other, double ratio) {
  const float r = static_cast<float>(ratio);
  const float alpha = static_cast<float>(1.0 - ratio);
  uint8_t table[256];
  for (int v = 0; v < 256; ++v) table[v] = clamp_to_u8(fused_add(static_cast<float>(v) * r, alpha, other));
  apply_table(image, table);
}

void check_non_negative(double factor, const char* name) {
  if (factor < 0)
    throw InputError(std::string(name) + " (" + color_number(factor) + ") is not non-negative.");
}

} // namespace

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
  const float f = static_cast<float>(brightness_factor);
  uint8_t table[256];
  for (int v = 0; v < 256; ++v) table[v] = clamp_to_u8(static_cast<float>(v) * f);
  apply_table(image, table);
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
    for (int64_t i = 0; i < pixels; ++i, p += 3)
      sum += static_cast<int64_t>(std::floor(grey_float(p[0], p[1], p[2])));
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
  uint8_t* p = image.data();
  const int64_t pixels = image.height * image.width;
  for (int64_t i = 0; i < pixels; ++i, p += 3) {
    const float grey = std::floor(grey_float(p[0], p[1], p[2]));
    p[0] = clamp_to_u8(fused_add(scaled[p[0]], alpha, grey));
    p[1] = clamp_to_u8(fused_add(scaled[p[1]], alpha, grey));
    p[2] = clamp_to_u8(fused_add(scaled[p[2]], alpha, grey));
  }
}

namespace {

/// One pixel through _rgb_to_hsv, h + factor, _hsv_to_rgb and to_dtype(uint8, scale=True), with
/// torchvision's float32 operations in its order (its masks select one of hr, hg, hb; the others add 0).
inline void hue_pixel(uint8_t* p, float hue_factor) {
  const float scale = static_cast<float>(1.0 / 255.0);
  const float r = static_cast<float>(p[0]) * scale, g = static_cast<float>(p[1]) * scale,
              b = static_cast<float>(p[2]) * scale;
  const float maxc = std::max(std::max(r, g), b), minc = std::min(std::min(r, g), b);
  const bool eqc = maxc == minc;
  const float range = maxc - minc;
  const float s = range / (eqc ? 1.0f : maxc);
  const float divisor = eqc ? 1.0f : range;
  const float rc = (maxc - r) / divisor, gc = (maxc - g) / divisor, bc = (maxc - b) / divisor;
  float h;
  if (maxc == r) h = bc - gc;
  else if (maxc == g) h = (rc + 2.0f) - bc;
  else h = (gc + 4.0f) - rc;
  h = std::fmod(h * static_cast<float>(1.0 / 6.0) + 1.0f, 1.0f);
  // h.add_(hue_factor).remainder_(1.0): fmod, then + 1 for a negative remainder (rounded in float).
  h = std::fmod(h + hue_factor, 1.0f);
  if (h != 0.0f && h < 0.0f) h += 1.0f;

  const float h6 = h * 6.0f;
  const float fl = std::floor(h6);
  const float f = h6 - fl;
  int i = static_cast<int>(fl) % 6;
  if (i < 0) i += 6;
  const float v = maxc;
  const float sxf = s * f;
  const float one_minus_s = 1.0f - s;
  const float q = std::min(std::max((1.0f - sxf) * v, 0.0f), 1.0f);
  const float t = std::min(std::max((sxf + one_minus_s) * v, 0.0f), 1.0f);
  const float pp = std::min(std::max(one_minus_s * v, 0.0f), 1.0f);
  float out_r, out_g, out_b;
  switch (i) {
    case 0: out_r = v, out_g = t, out_b = pp; break;
    case 1: out_r = q, out_g = v, out_b = pp; break;
    case 2: out_r = pp, out_g = v, out_b = t; break;
    case 3: out_r = pp, out_g = q, out_b = v; break;
    case 4: out_r = t, out_g = pp, out_b = v; break;
    default: out_r = v, out_g = pp, out_b = q; break;
  }
  const float to_u8 = static_cast<float>(255.0 + 1.0 - 1e-3);  // to_dtype_image's max + 1 - eps, truncated
  p[0] = static_cast<uint8_t>(out_r * to_u8);
  p[1] = static_cast<uint8_t>(out_g * to_u8);
  p[2] = static_cast<uint8_t>(out_b * to_u8);
}

} // namespace

void adjust_hue_u8(ImageU8& image, double hue_factor) {
  if (!(hue_factor >= -0.5 && hue_factor <= 0.5))
    throw InputError("hue_factor (" + color_number(hue_factor) + ") is not in [-0.5, 0.5].");
  check_color_channels(image.channels, "adjust_hue");
  if (image.channels == 1) return;  // torchvision: "Match PIL behaviour"
  const float factor = static_cast<float>(hue_factor);
  uint8_t* p = image.data();
  const int64_t pixels = image.height * image.width;
  for (int64_t i = 0; i < pixels; ++i, p += 3) hue_pixel(p, factor);
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
  uint8_t* p = image.data();
  if (num_output_channels == 3) {
    for (int64_t i = 0; i < pixels; ++i, p += 3) p[0] = p[1] = p[2] = static_cast<uint8_t>(grey_float(p[0], p[1], p[2]));
    return;
  }
  for (int64_t i = 0; i < pixels; ++i) p[i] = static_cast<uint8_t>(grey_float(p[3 * i], p[3 * i + 1], p[3 * i + 2]));
  image.channels = 1;
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

void solarize_u8(ImageU8& image, double threshold) {
  check_solarize_threshold(threshold);
  uint8_t table[256];
  for (int v = 0; v < 256; ++v) table[v] = static_cast<double>(v) >= threshold ? static_cast<uint8_t>(255 - v) : v;
  apply_table(image, table);
}

void adjust_sharpness_u8(ImageU8& image, double sharpness_factor, TransformScratch& scratch) {
  if (image.channels != 1 && image.channels != 3)
    throw TransformTypeError("Input image tensor can have 1 or 3 channels, but found " + std::to_string(image.channels));
  check_non_negative(sharpness_factor, "sharpness_factor");
  const int64_t h = image.height, w = image.width, c = image.channels;
  if (h <= 2 || w <= 2) return;
  const float alpha = static_cast<float>(1.0 - sharpness_factor);
  ImageU8& out = scratch.spare;
  out.reshape(h, w, c);
  const int64_t stride = w * c;
  std::memcpy(out.row(0), image.row(0), stride);
  std::memcpy(out.row(h - 1), image.row(h - 1), stride);
  for (int64_t y = 1; y < h - 1; ++y) {
    const uint8_t* up = image.row(y - 1);
    const uint8_t* mid = image.row(y);
    const uint8_t* down = image.row(y + 1);
    uint8_t* o = out.row(y);
    std::memcpy(o, mid, c);
    std::memcpy(o + stride - c, mid + stride - c, c);
    for (int64_t x = c; x < stride - c; ++x) {
      // conv2d with 1/13 around 5/13, then round_(): the exact value is an integer / 13, never half-way, so
      // float32's sum rounds as the integers do: (s + 6) / 13.
      const int s = up[x - c] + up[x] + up[x + c] + mid[x - c] + 5 * mid[x] + mid[x + c] + down[x - c] + down[x] +
                    down[x + c];
      const int blurred = (s + 6) / 13;
      o[x] = clamp_to_u8(fused_add(static_cast<float>(mid[x]), alpha, static_cast<float>(blurred - mid[x])));
    }
  }
  std::swap(image, out);
}

} // namespace fastloop
