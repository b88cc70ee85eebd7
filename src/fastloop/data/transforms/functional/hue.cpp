// adjust_hue_u8 (color.h) as torchvision.transforms.v2.functional.adjust_hue computes it on uint8: _rgb_to_hsv,
// h + factor, _hsv_to_rgb and to_dtype(uint8, scale=True) in float32, in torchvision's order; 8 pixels at a time
// in GCC vectors where the AVX2 clone runs, one at a time for the rest.
#include "fastloop/data/transforms/functional/color.h"

#include "fastloop/data/transforms/functional/cpu_clones.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace fastloop {

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

// 8 pixels at a time in GCC/Clang vector types: the same float32 operations as hue_pixel, its branches as
// selects (lanes compute all of hr, hg, hb and pick one, as torchvision's masks do).
typedef float HueF8 __attribute__((vector_size(32)));
typedef int32_t HueI8 __attribute__((vector_size(32)));

FASTLOOP_AVX2_CLONES
void hue_block8(uint8_t* __restrict p, int64_t blocks, float hue_factor) {
  const float scale = static_cast<float>(1.0 / 255.0), sixth = static_cast<float>(1.0 / 6.0);
  const float to_u8 = static_cast<float>(255.0 + 1.0 - 1e-3);
  for (int64_t blk = 0; blk < blocks; ++blk, p += 24) {
    HueF8 r, g, b;
    for (int k = 0; k < 8; ++k) r[k] = p[3 * k], g[k] = p[3 * k + 1], b[k] = p[3 * k + 2];
    r *= scale, g *= scale, b *= scale;
    const HueF8 one = {1, 1, 1, 1, 1, 1, 1, 1}, zero = {};
    const HueF8 maxc = r > g ? (r > b ? r : b) : (g > b ? g : b);
    const HueF8 minc = r < g ? (r < b ? r : b) : (g < b ? g : b);
    const HueI8 eqc = maxc == minc;
    const HueF8 range = maxc - minc;
    const HueF8 s = range / (eqc ? one : maxc);
    const HueF8 divisor = eqc ? one : range;
    const HueF8 rc = (maxc - r) / divisor, gc = (maxc - g) / divisor, bc = (maxc - b) / divisor;
    const HueF8 hr = bc - gc, hg = (rc + 2.0f) - bc, hb = (gc + 4.0f) - rc;
    HueF8 h = maxc == r ? hr : (maxc == g ? hg : hb);
    h = h * sixth + 1.0f;
    h = h >= 1.0f ? h - 1.0f : h;  // fmod(h, 1) for h in [0.83, 1.84): exact
    h = h + hue_factor;
    h = h >= 1.0f ? h - 1.0f : (h < 0.0f ? h + 1.0f : h);  // remainder(h, 1) for h in [-0.5, 1.5)
    const HueF8 h6 = h * 6.0f;
    HueI8 i = __builtin_convertvector(h6, HueI8);  // h6 >= 0: truncation is floor
    const HueF8 f = h6 - __builtin_convertvector(i, HueF8);
    i = i == 6 ? HueI8{} : i;
    const HueF8 v = maxc, sxf = s * f, one_minus_s = 1.0f - s;
    HueF8 q = (1.0f - sxf) * v, t = (sxf + one_minus_s) * v, pp = one_minus_s * v;
    q = q < zero ? zero : (q > one ? one : q);
    t = t < zero ? zero : (t > one ? one : t);
    pp = pp < zero ? zero : (pp > one ? one : pp);
    const HueF8 out_r = ((i == 0) | (i == 5)) ? v : (i == 1 ? q : (i == 4 ? t : pp));
    const HueF8 out_g = ((i == 1) | (i == 2)) ? v : (i == 0 ? t : (i == 3 ? q : pp));
    const HueF8 out_b = ((i == 3) | (i == 4)) ? v : (i == 2 ? t : (i == 5 ? q : pp));
    const HueI8 ir = __builtin_convertvector(out_r * to_u8, HueI8), ig = __builtin_convertvector(out_g * to_u8, HueI8),
                ib = __builtin_convertvector(out_b * to_u8, HueI8);
    for (int k = 0; k < 8; ++k)
      p[3 * k] = static_cast<uint8_t>(ir[k]), p[3 * k + 1] = static_cast<uint8_t>(ig[k]),
      p[3 * k + 2] = static_cast<uint8_t>(ib[k]);
  }
}

void adjust_hue_u8(ImageU8& image, double hue_factor) {
  if (!(hue_factor >= -0.5 && hue_factor <= 0.5))
    throw InputError("hue_factor (" + float_repr(hue_factor) + ") is not in [-0.5, 0.5].");
  check_color_channels(image.channels, "adjust_hue");
  if (image.channels == 1) return;  // torchvision: "Match PIL behaviour"
  const float factor = static_cast<float>(hue_factor);
  uint8_t* p = image.data();
  const int64_t pixels = image.height * image.width, blocks = pixels / 8;
  hue_block8(p, blocks, factor);
  for (int64_t i = blocks * 8; i < pixels; ++i) hue_pixel(p + 3 * i, factor);
}

}  // namespace fastloop
