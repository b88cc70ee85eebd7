// The colour kernels (functional/color.h, functional/histogram.h) against torchvision.transforms.v2.functional's
// uint8 code restated line by line in ATen ops (the same LibTorch kernels torchvision calls), on synthetic
// photo-like images of several sizes, grey and RGBA. tests/python/test_transforms_color.py checks the same
// kernels against the venv's torchvision itself on real photographs.
// Measured max difference (uint8 levels) here: every kernel 0; adjust_hue, adjust_saturation and
// rgb_to_grayscale on all 16.8 M colours.
#include "color_test_images.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/functional/color.h"
#include "fastloop/data/transforms/functional/histogram.h"
#include "fastloop/data/transforms/transform.h"

#include <ATen/Version.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace fastloop {

using test::color_test_image;
using test::kColorShapes;

namespace {

at::Tensor color_test_chw(const ImageU8& image) {
  auto hwc = torch::from_blob(const_cast<uint8_t*>(image.data()), {image.height, image.width, image.channels},
                              torch::kUInt8);
  return hwc.permute({2, 0, 1}).clone(at::MemoryFormat::Contiguous);
}

int64_t color_test_max_diff(const ImageU8& ours, const at::Tensor& reference_chw) {
  EXPECT_EQ(ours.channels, reference_chw.size(0));
  EXPECT_EQ(ours.height, reference_chw.size(1));
  EXPECT_EQ(ours.width, reference_chw.size(2));
  return (color_test_chw(ours).to(torch::kInt32) - reference_chw.to(torch::kInt32)).abs().max().item<int64_t>();
}

/// The share of values that differ from the reference.
double color_test_share_different(const ImageU8& ours, const at::Tensor& reference_chw) {
  return color_test_chw(ours).ne(reference_chw).to(torch::kFloat64).mean().item<double>();
}

/// Whether ATen's float kernels fuse add(..., alpha) into one multiply-add, as fastloop's colour kernels restate
/// (its AVX2 and AVX-512 builds). The baseline kernel (ATEN_CPU_CAPABILITY=default) rounds the product apart,
/// so a grey level within an ulp of an integer can floor to the other side (tests/python/kernel_parity.py).
bool aten_fuses_blends() {
  const std::string capability = at::get_cpu_capability();
  return capability == "AVX2" || capability == "AVX512";
}

// torchvision's uint8 code, restated.
at::Tensor tv_blend(const at::Tensor& a, const at::Tensor& b, double ratio) {
  return a.mul(ratio).add_(b, 1.0 - ratio).clamp_(0, 255).to(torch::kUInt8);
}
at::Tensor tv_grey_float(const at::Tensor& img) {
  auto rgb = img.unbind(0);
  return rgb[0].mul(0.2989).add_(rgb[1], 0.587).add_(rgb[2], 0.114).unsqueeze(0);
}
at::Tensor tv_contrast(const at::Tensor& img, double f) {
  auto grey = img.size(0) == 3 ? tv_grey_float(img).floor_() : img.to(torch::kFloat32);
  return tv_blend(img, grey.mean({-3, -2, -1}, true), f);
}
at::Tensor tv_rgb_to_hsv(const at::Tensor& image) {
  auto rgb = image.unbind(0);
  auto [minc, maxc] = at::aminmax(image, 0);
  auto eqc = maxc == minc;
  auto channels_range = maxc - minc;
  auto ones = torch::ones_like(maxc);
  auto s = channels_range / torch::where(eqc, ones, maxc);
  auto divisor = torch::where(eqc, ones, channels_range).unsqueeze_(0);
  auto c = ((maxc.unsqueeze(0) - image) / divisor).unbind(0);
  auto rc = c[0], gc = c[1], bc = c[2];
  auto neq_r = maxc != rgb[0];
  auto eq_g = maxc == rgb[1];
  auto hg = rc.add(2.0).sub_(bc).mul_(eq_g & neq_r);
  auto hr = bc.sub_(gc).mul_(~neq_r);
  auto hb = gc.add_(4.0).sub_(rc).mul_(neq_r.logical_and_(eq_g.logical_not_()));
  auto h = hr.add_(hg).add_(hb).mul_(1.0 / 6.0).add_(1.0).fmod_(1.0);
  return torch::stack({h, s, maxc}, 0);
}
at::Tensor tv_hsv_to_rgb(const at::Tensor& img) {
  auto hsv = img.unbind(0);
  auto h6 = hsv[0].mul(6);
  auto i = torch::floor(h6);
  auto f = h6.sub_(i);
  auto ii = i.to(torch::kInt32);
  auto sxf = hsv[1] * f;
  auto one_minus_s = 1.0 - hsv[1];
  auto q = (1.0 - sxf).mul_(hsv[2]).clamp_(0.0, 1.0);
  auto t = sxf.add_(one_minus_s).mul_(hsv[2]).clamp_(0.0, 1.0);
  auto p = one_minus_s.mul_(hsv[2]).clamp_(0.0, 1.0);
  ii.remainder_(6);
  auto vpqt = torch::stack({hsv[2], p, q, t}, 0);
  auto select = torch::tensor({0, 2, 1, 1, 3, 0, 3, 0, 0, 2, 1, 1, 1, 1, 3, 0, 0, 2}, torch::kLong).view({3, 6});
  return vpqt.gather(0, select.index({torch::indexing::Slice(), ii.to(torch::kLong)}));
}
at::Tensor tv_hue(const at::Tensor& img, double f) {
  auto hsv = tv_rgb_to_hsv(img.to(torch::kFloat32).mul_(1.0 / 255)).unbind(0);
  hsv[0].add_(f).remainder_(1.0);
  return tv_hsv_to_rgb(torch::stack({hsv[0], hsv[1], hsv[2]}, 0)).mul(255.0 + 1.0 - 1e-3).to(torch::kUInt8);
}
at::Tensor tv_sharpness(const at::Tensor& img, double f) {
  const int64_t c = img.size(0);
  const double a = 1.0 / 13.0, b = 5.0 / 13.0;
  auto kernel = torch::tensor({a, a, a, a, b, a, a, a, a}, torch::kFloat32).view({1, 1, 3, 3}).expand({c, 1, 3, 3});
  auto output = img.unsqueeze(0).to(torch::kFloat32);
  auto blurred = torch::conv2d(output, kernel, at::Tensor(), at::IntArrayRef{1}, at::IntArrayRef{0}, at::IntArrayRef{1}, c).round_();
  auto view = output.index({"...", torch::indexing::Slice(1, -1), torch::indexing::Slice(1, -1)});
  view.add_(blurred.sub_(view), 1.0 - f);
  return output.clamp_(0, 255).to(torch::kUInt8).squeeze(0);
}
at::Tensor tv_autocontrast(const at::Tensor& img) {
  auto x = img.to(torch::kFloat32);
  auto minimum = x.amin({-2, -1}, true), maximum = x.amax({-2, -1}, true);
  auto eq = maximum == minimum;
  auto inv_scale = maximum.sub_(minimum).mul_(1.0 / 255);
  minimum.index_put_({eq}, 0.0);
  inv_scale.index_put_({eq}, 1.0);
  return x.sub_(minimum).div_(inv_scale).clamp_(0, 255).to(torch::kUInt8);
}
at::Tensor tv_equalize(const at::Tensor& img) {
  auto flat = img.flatten(-2).to(torch::kLong);
  auto hist = torch::zeros({img.size(0), 256}, torch::kInt32);
  hist.scatter_add_(-1, flat, torch::ones({1}, torch::kInt32).expand_as(flat));
  auto cum = hist.cumsum(-1);
  auto index = cum.argmax(-1).unsqueeze_(-1);
  auto non_max = flat.size(-1) - hist.gather(-1, index);
  auto step = non_max.div_(255, "floor");
  auto valid = step.ne(0).unsqueeze_(-1);
  auto c = cum.index({"...", torch::indexing::Slice(0, -1)}).clone();
  c.add_(step.div(2, "floor")).div_(step.clamp(1), "floor").clamp_(0, 255);
  auto lut = torch::cat({torch::zeros({img.size(0), 1}, torch::kUInt8), c.to(torch::kUInt8)}, -1);
  auto out = lut.gather(-1, flat).view_as(img);
  return torch::where(valid, out, img);
}


template <typename Kernel, typename Reference>
int64_t color_kernel_max_diff(Kernel kernel, Reference reference, bool grey_too = true) {
  int64_t worst = 0;
  uint32_t seed = 1;
  for (const auto& s : kColorShapes) {
    if (s.c == 1 && !grey_too) continue;
    ImageU8 image = color_test_image(s.h, s.w, s.c, seed++);
    const at::Tensor input = color_test_chw(image);
    kernel(image);
    worst = std::max(worst, color_test_max_diff(image, reference(input)));
  }
  return worst;
}

} // namespace

TEST(TransformsColor, BrightnessMatchesTorchvisionBytes) {
  for (double f : {0.0, 0.37, 1.0, 1.3, 2.71}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { adjust_brightness_u8(im, f); },
                                    [&](const at::Tensor& t) { return t.mul(f).clamp_(0, 255).to(torch::kUInt8); }),
              0)
        << f;
  }
}

/// The levels torchvision's saturation blend may differ by here: 0 where ATen's kernels fuse its multiply-add as
/// fastloop does (AVX2, AVX-512), 1 under the baseline kernel (tests/python/kernel_parity.py has the measurements).
int64_t blend_levels() {
  const char* capability = std::getenv("ATEN_CPU_CAPABILITY");
  return !cpu_info().avx2 || (capability != nullptr && std::string(capability) == "default") ? 1 : 0;
}

TEST(TransformsColor, ContrastMatchesTorchvisionBytes) {
  for (double f : {0.0, 0.4, 1.0, 1.6, 3.3}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { adjust_contrast_u8(im, f); },
                                    [&](const at::Tensor& t) { return tv_contrast(t, f); }),
              0)
        << f;
  }
}

TEST(TransformsColor, SaturationMatchesTorchvisionBytes) {
  for (double f : {0.0, 0.6, 1.0, 1.4, 2.9}) {
    EXPECT_LE(color_kernel_max_diff([&](ImageU8& im) { adjust_saturation_u8(im, f); },
                                    [&](const at::Tensor& t) {
                                      return t.size(0) == 1 ? t : tv_blend(t, tv_grey_float(t).floor_(), f);
                                    }),
              blend_levels())
        << f;
  }
}

TEST(TransformsColor, HueMatchesTorchvisionBytes) {
  for (double f : {-0.5, -0.31, -0.05, 0.0, 0.1, 0.26, 0.5}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { adjust_hue_u8(im, f); },
                                    [&](const at::Tensor& t) { return t.size(0) == 1 ? t : tv_hue(t, f); }),
              0)
        << f;
  }
}

TEST(TransformsColor, EveryColourMatchesTorchvisionInHueSaturationAndGrey) {
  // All 16.8 M colours once, as a 4096 x 4096 image: the fixed-point grey and blend paths and their float
  // fallbacks, and hue's vector lanes, on every input there is.
  ImageU8 all;
  all.reshape(4096, 4096, 3);
  for (int64_t i = 0; i < (1 << 24); ++i) {
    all.pixels[3 * i] = static_cast<uint8_t>(i >> 16);
    all.pixels[3 * i + 1] = static_cast<uint8_t>(i >> 8);
    all.pixels[3 * i + 2] = static_cast<uint8_t>(i);
  }
  const at::Tensor input = color_test_chw(all);
  for (double f : {-0.2}) {
    ImageU8 image = all;
    adjust_hue_u8(image, f);
    EXPECT_EQ(color_test_max_diff(image, tv_hue(input, f)), 0) << f;
  }
  // Under the baseline kernels a grey level one off moves a blend by |1 - f| levels, plus the blend's own
  // rounding. Measured under ATEN_CPU_CAPABILITY=default (AVX2 EPYC): saturation 1, 1, 3 levels on 0.15%, 1.1%,
  // 0.15% of the values for f = 0.3, 1.3, 3.71; grey 1 level on 1.3e-6 of them (21 colours).
  const bool fused = aten_fuses_blends();
  for (double f : {0.3, 1.3, 3.71}) {
    ImageU8 image = all;
    adjust_saturation_u8(image, f);
    const at::Tensor reference = tv_blend(input, tv_grey_float(input).floor_(), f);
    EXPECT_LE(color_test_max_diff(image, reference), fused ? 0 : std::floor(std::abs(1.0 - f)) + 1) << f;
    EXPECT_LE(color_test_share_different(image, reference), fused ? 0.0 : 0.02) << f;
  }
  ImageU8 grey = all;
  rgb_to_grayscale_u8(grey, 1);
  const at::Tensor reference = tv_grey_float(input).to(torch::kUInt8);
  EXPECT_LE(color_test_max_diff(grey, reference), fused ? 0 : 1);
  EXPECT_LE(color_test_share_different(grey, reference), fused ? 0.0 : 1e-5);
}

TEST(TransformsColor, GrayscaleMatchesTorchvisionBytes) {
  for (int64_t n : {1, 3}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { rgb_to_grayscale_u8(im, n); },
                                    [&](const at::Tensor& t) {
                                      if (t.size(0) == 1) return n == 1 ? t.clone() : t.repeat({3, 1, 1});
                                      auto g = tv_grey_float(t).to(torch::kUInt8);
                                      return n == 3 ? g.expand({3, -1, -1}).contiguous() : g;
                                    }),
              0)
        << n;
  }
}

TEST(TransformsColor, SharpnessMatchesTorchvisionBytes) {
  for (double f : {0.0, 0.3, 1.0, 1.9, 4.0}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) {
                TransformScratch scratch;
                adjust_sharpness_u8(im, f, scratch);
              },
                                    [&](const at::Tensor& t) { return tv_sharpness(t, f); }),
              0)
        << f;
  }
}

TEST(TransformsColor, IntegerKernelsMatchTorchvisionBytesOnRgba) {
  ImageU8 rgba = color_test_image(41, 67, 4, 9);
  const at::Tensor input = color_test_chw(rgba);
  ImageU8 a = rgba, b = rgba, c = rgba, d = rgba;
  invert_u8(a);
  EXPECT_EQ(color_test_max_diff(a, input.bitwise_not()), 0);
  posterize_u8(b, 3);
  EXPECT_EQ(color_test_max_diff(b, input.bitwise_and(0xE0)), 0);
  solarize_u8(c, 127.5);
  EXPECT_EQ(color_test_max_diff(c, torch::where(input >= 127.5, input.bitwise_not(), input)), 0);
  equalize_u8(d);
  EXPECT_EQ(color_test_max_diff(d, tv_equalize(input)), 0);
}

TEST(TransformsColor, PosterizeSolarizeInvertMatchTorchvisionBytes) {
  for (int64_t bits = 0; bits <= 8; ++bits) {
    const int mask = bits == 8 ? 255 : ((1 << bits) - 1) << (8 - bits);
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { posterize_u8(im, bits); },
                                    [&](const at::Tensor& t) { return t.bitwise_and(mask); }),
              0);
  }
  for (double th : {0.0, 64.0, 128.0, 200.5, 255.0}) {
    EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { solarize_u8(im, th); },
                                    [&](const at::Tensor& t) { return torch::where(t >= th, t.bitwise_not(), t); }),
              0);
  }
  EXPECT_EQ(color_kernel_max_diff([&](ImageU8& im) { invert_u8(im); },
                                  [&](const at::Tensor& t) { return t.bitwise_not(); }),
            0);
}

TEST(TransformsColor, AutocontrastAndEqualizeMatchTorchvisionBytes) {
  EXPECT_EQ(color_kernel_max_diff([](ImageU8& im) { autocontrast_u8(im); }, tv_autocontrast), 0);
  EXPECT_EQ(color_kernel_max_diff([](ImageU8& im) { equalize_u8(im); }, tv_equalize), 0);
  // A flat image: autocontrast keeps it, equalize's step is 0.
  ImageU8 flat;
  flat.reshape(5, 7, 3);
  std::memset(flat.data(), 77, flat.bytes());
  autocontrast_u8(flat);
  equalize_u8(flat);
  EXPECT_EQ(flat.pixels[0], 77);
}

TEST(TransformsColor, KernelsRefuseWhatTorchvisionRefuses) {
  ImageU8 rgba = color_test_image(8, 8, 4, 3);
  TransformScratch scratch;
  EXPECT_THROW(adjust_brightness_u8(rgba, 1.2), TransformTypeError);
  EXPECT_THROW(adjust_hue_u8(rgba, 0.1), TransformTypeError);
  EXPECT_THROW(adjust_sharpness_u8(rgba, 2, scratch), TransformTypeError);
  EXPECT_THROW(autocontrast_u8(rgba), TransformTypeError);
  EXPECT_THROW(rgb_to_grayscale_u8(rgba, 1), InputError);
  ImageU8 rgb = color_test_image(8, 8, 3, 4);
  EXPECT_THROW(adjust_hue_u8(rgb, 0.6), InputError);
  EXPECT_THROW(adjust_saturation_u8(rgb, -0.1), InputError);
  EXPECT_THROW(posterize_u8(rgb, 9), TransformTypeError);
  EXPECT_THROW(solarize_u8(rgb, 256), TransformTypeError);
  EXPECT_THROW(rgb_to_grayscale_u8(rgb, 2), InputError);
  try {
    adjust_contrast_u8(rgb, -0.5);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "contrast_factor (-0.5) is not non-negative.");
  }
}

} // namespace fastloop
