// The geometry kernels of data/transforms/functional (flip, crop_pad, resize, warp/affine/perspective, blur)
// against ATen's own kernels in this process, the ones torchvision.transforms.v2.functional calls on uint8
// tensors: equal bytes for flips, crops, pads and every resize mode, for rotate/affine/perspective (ATen's
// grid_sample on torchvision's grid, fill blended as _apply_grid_transform does; equal where the test shows
// ATen runs fastloop's arithmetic, kernel_parity.py's one-warp rule elsewhere) and at most 1 level for the
// Gaussian blur (torch convolves with the 2-D kernel, we run it separably). tests/python/
// test_transforms_geometry.py checks the same against torchvision itself on JPEG photos.
#include "fastloop/data/transforms/functional/affine.h"
#include "fastloop/data/transforms/functional/blur.h"
#include "fastloop/data/transforms/functional/crop_pad.h"
#include "fastloop/data/transforms/functional/flip.h"
#include "fastloop/data/transforms/functional/perspective.h"
#include "fastloop/data/transforms/functional/resize.h"
#include "fastloop/data/transforms/functional/warp.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace fastloop;

namespace {

// An H x W x C image: smooth waves plus noise, so that any rounding difference shows.
ImageU8 geometry_image(int64_t H, int64_t W, int64_t C, uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const at::Tensor y = at::arange(H, at::kFloat).view({H, 1, 1}), x = at::arange(W, at::kFloat).view({1, W, 1});
  const at::Tensor c = at::arange(C, at::kFloat).view({1, 1, C});
  const at::Tensor smooth = 128 + 90 * at::sin(x / 7.0 + c) * at::cos(y / 5.0 - c);
  const at::Tensor t = (smooth + at::randn({H, W, C}, gen) * 25).clamp(0, 255).to(at::kByte).contiguous();
  ImageU8 image;
  image.reshape(H, W, C);
  std::memcpy(image.data(), t.data_ptr<uint8_t>(), static_cast<size_t>(image.bytes()));
  return image;
}

// The image as torchvision holds it: uint8 [1, C, H, W], contiguous.
at::Tensor chw(const ImageU8& image) {
  return at::from_blob(const_cast<uint8_t*>(image.data()), {image.height, image.width, image.channels}, at::kByte)
      .permute({2, 0, 1})
      .unsqueeze(0)
      .contiguous();
}

ImageU8 from_chw(const at::Tensor& t) {
  const at::Tensor hwc = t.squeeze(0).permute({1, 2, 0}).contiguous();
  ImageU8 image;
  image.reshape(hwc.size(0), hwc.size(1), hwc.size(2));
  std::memcpy(image.data(), hwc.data_ptr<uint8_t>(), static_cast<size_t>(image.bytes()));
  return image;
}

// The largest difference in levels; -1 when the shapes differ.
int max_difference(const ImageU8& a, const ImageU8& b) {
  if (a.height != b.height || a.width != b.width || a.channels != b.channels) return -1;
  int worst = 0;
  for (int64_t i = 0; i < a.bytes(); ++i) worst = std::max(worst, std::abs(int(a.data()[i]) - int(b.data()[i])));
  return worst;
}

// torchvision's _affine_grid + _apply_grid_transform with ATen: a ones channel, grid_sample, the fill blend,
// round, uint8. `fill` empty: torchvision's fill=None.
ImageU8 aten_warp(const ImageU8& image, const at::Tensor& grid, bool bilinear, const std::vector<float>& fill) {
  at::Tensor img = chw(image).to(at::kFloat);
  if (!fill.empty()) img = at::cat({img, at::ones({1, 1, image.height, image.width})}, 1);
  at::Tensor out = at::grid_sampler(img, grid, bilinear ? 0 : 1, 0, false);
  if (!fill.empty()) {
    at::Tensor mask = out.narrow(1, image.channels, 1).expand({1, image.channels, out.size(2), out.size(3)});
    out = out.narrow(1, 0, image.channels);
    at::Tensor f = at::tensor(fill).view({1, -1, 1, 1});
    out = bilinear ? (out - f) * mask + f : at::where(mask < 0.5, f.expand_as(out), out);
  }
  return from_chw(out.round().to(at::kByte));
}

// Whether bmm made every coordinate of `grid` (from `base` [1, N, 3] and `theta` [1, 3, 2], or over `denominator`'s
// [1, 3, 2] for a perspective) as fastloop's warps compute it: fma(y, t1, x * t0) + t2 in float32 (MKL's AVX-512
// code on Intel's CPUs; its AVX2 code, which AMD's AVX-512 CPUs get too, rounds otherwise: kernel_parity.py).
bool grid_is_fastloops(const at::Tensor& base, const at::Tensor& theta, const at::Tensor& grid,
                       const at::Tensor& denominator = at::Tensor()) {
  const at::Tensor b = base.reshape({-1, 3}).contiguous(), t = theta.reshape({3, 2}).contiguous();
  const at::Tensor g = grid.reshape({-1, 2}).contiguous();
  const float* pb = b.data_ptr<float>();
  const float* pt = t.data_ptr<float>();
  const float* pg = g.data_ptr<float>();
  const at::Tensor d = denominator.defined() ? denominator.reshape({3, 2}).contiguous() : at::Tensor();
  for (int64_t i = 0; i < b.size(0); ++i) {
    const float x = pb[3 * i], y = pb[3 * i + 1];
    for (int64_t k = 0; k < 2; ++k) {
      float v = std::fma(y, pt[2 + k], x * pt[k]) + pt[4 + k];
      if (d.defined()) {
        const float* pd = d.data_ptr<float>();
        v = v / (std::fma(y, pd[2 + k], x * pd[k]) + pd[4 + k]) - 1.f;
      }
      if (v != pg[2 * i + k]) return false;
    }
  }
  return true;
}

// torchvision's _affine_grid with ATen, and whether its bmm ran fastloop's arithmetic here.
struct AtenGrid {
  at::Tensor grid;
  bool fastloops = false;
};

AtenGrid affine_grid(const std::array<double, 6>& m, int64_t w, int64_t h, int64_t ow, int64_t oh) {
  const at::Tensor theta = at::tensor(std::vector<double>(m.begin(), m.end()), at::kFloat).view({1, 2, 3});
  at::Tensor base = at::empty({1, oh, ow, 3});
  base.select(3, 0).copy_(at::linspace((1.0 - ow) * 0.5, (ow - 1.0) * 0.5, ow));
  base.select(3, 1).copy_(at::linspace((1.0 - oh) * 0.5, (oh - 1.0) * 0.5, oh).unsqueeze(-1));
  base.select(3, 2).fill_(1);
  const at::Tensor rescaled = theta.transpose(1, 2) / at::tensor({0.5f * w, 0.5f * h});
  const at::Tensor grid = base.view({1, oh * ow, 3}).bmm(rescaled).view({1, oh, ow, 2});
  return {grid, grid_is_fastloops(base, rescaled, grid)};
}

// Ours against ATen's warp: equal bytes where ATen runs the arithmetic fastloop restates (its AVX-512 grid_sample
// on a grid it made as fastloop does), else kernel_parity.py's rule for one warp: bilinear within 1 level, and
// at most 1% of the values differ (a nearest sample point on a pixel middle takes the other pixel).
void expect_warp_matches(const ImageU8& ours, const ImageU8& aten, bool bilinear, bool grid_fastloops,
                         const std::string& what) {
  const int worst = max_difference(ours, aten);
  ASSERT_GE(worst, 0) << what << ": the shapes differ";
  if (grid_fastloops && at::get_cpu_capability() == "AVX512") {
    EXPECT_EQ(worst, 0) << what;
    return;
  }
  int64_t differing = 0;
  for (int64_t i = 0; i < ours.bytes(); ++i) differing += ours.data()[i] != aten.data()[i];
  EXPECT_LE(differing, ours.bytes() / 100) << what;
  if (bilinear) {
    EXPECT_LE(worst, 1) << what;
  }
}

const int64_t kChannels[] = {1, 3, 4};

}  // namespace

TEST(TransformsGeometry, FlipsMirrorTheImage) {
  for (int64_t C : kChannels) {
    const ImageU8 image = geometry_image(7, 9, C, 1);
    ImageU8 h = image, v = image;
    horizontal_flip_u8(h);
    vertical_flip_u8(v);
    EXPECT_EQ(max_difference(h, from_chw(chw(image).flip({3}))), 0) << C;
    EXPECT_EQ(max_difference(v, from_chw(chw(image).flip({2}))), 0) << C;
  }
}

TEST(TransformsGeometry, PadModesFollowTorchvisionsExamples) {
  // torchvision's docs: [1, 2, 3, 4] padded by 2 each side.
  ImageU8 row;
  row.reshape(1, 4, 1);
  for (int i = 0; i < 4; ++i) row.data()[i] = static_cast<uint8_t>(i + 1);
  const std::vector<std::pair<PaddingMode, std::vector<int>>> expected = {
      {PaddingMode::kConstant, {9, 9, 1, 2, 3, 4, 9, 9}},
      {PaddingMode::kEdge, {1, 1, 1, 2, 3, 4, 4, 4}},
      {PaddingMode::kReflect, {3, 2, 1, 2, 3, 4, 3, 2}},
      {PaddingMode::kSymmetric, {2, 1, 1, 2, 3, 4, 4, 3}}};
  TransformScratch scratch;
  const uint8_t fill[4] = {9, 9, 9, 9};
  for (const auto& [mode, values] : expected) {
    ImageU8 out;
    pad_u8(row, Padding{2, 0, 2, 0}, mode, fill, out, scratch);
    ASSERT_EQ(out.width, 8);
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(out.data()[i], values[static_cast<size_t>(i)]) << padding_mode_name(mode) << " " << i;
  }
  EXPECT_THROW(pad_u8(row, Padding{4, 0, 0, 0}, PaddingMode::kReflect, fill, row, scratch), InputError);
  EXPECT_THROW(padding_mode_parse("wrap"), InputError);
}

TEST(TransformsGeometry, PadAndCropEqualAtensPadAndSlicing) {
  TransformScratch scratch;
  for (int64_t C : kChannels) {
    const ImageU8 image = geometry_image(13, 17, C, 2);
    const at::Tensor t = chw(image);
    ImageU8 out;
    const uint8_t fill[4] = {5, 6, 7, 8};
    pad_u8(image, Padding{3, 1, 2, 4}, PaddingMode::kEdge, fill, out, scratch);
    EXPECT_EQ(max_difference(out, from_chw(at::replication_pad2d(t.to(at::kFloat), {3, 2, 1, 4}).to(at::kByte))), 0);
    pad_u8(image, Padding{3, 1, 2, 4}, PaddingMode::kReflect, fill, out, scratch);
    EXPECT_EQ(max_difference(out, from_chw(at::reflection_pad2d(t.to(at::kFloat), {3, 2, 1, 4}).to(at::kByte))), 0);
    pad_u8(image, Padding{-2, 1, 3, -1}, PaddingMode::kConstant, fill, out, scratch);
    at::Tensor ref = at::constant_pad_nd(t, {-2, 3, 1, -1}, 0);
    for (int64_t c = 0; c < C; ++c) {  // torchvision's vector fill: the padded borders per channel
      ref.select(1, c).narrow(1, 0, 1).fill_(fill[c]);
      ref.select(1, c).narrow(2, ref.size(3) - 3, 3).fill_(fill[c]);
    }
    EXPECT_EQ(max_difference(out, from_chw(ref)), 0);
    crop_u8(image, -2, 5, 6, 20, out, scratch);  // outside the image: zeros, as v2.functional.crop
    EXPECT_EQ(max_difference(out, from_chw(at::constant_pad_nd(t.narrow(2, 0, 4).narrow(3, 5, 12), {0, 8, 2, 0}, 0))),
              0);
  }
}

TEST(TransformsGeometry, ResizeEqualsAtensUint8KernelsInEveryMode) {
  TransformScratch scratch;
  const std::vector<std::array<int64_t, 2>> sizes = {{31, 47}, {64, 64}, {10, 90}, {5, 3}, {45, 45}};
  for (int64_t C : kChannels) {
    const ImageU8 image = geometry_image(45, 61, C, 3);
    for (const auto& size : sizes) {
      for (int mode = 0; mode < 4; ++mode) {
        for (bool aa : {false, true}) {
          const auto interpolation = static_cast<Interpolation>(mode);
          ImageU8 out;
          resized_crop_u8(image, 2, 3, 40, 55, size[0], size[1], interpolation, aa, out, scratch);
          const at::Tensor box = chw(image).narrow(2, 2, 40).narrow(3, 3, 55).contiguous();
          const std::vector<int64_t> o = {size[0], size[1]};
          at::Tensor ref;
          if (interpolation == Interpolation::kNearest) ref = at::upsample_nearest2d(box, o);
          if (interpolation == Interpolation::kNearestExact) ref = at::_upsample_nearest_exact2d(box, o);
          if (interpolation == Interpolation::kBilinear) {
            ref = aa ? at::_upsample_bilinear2d_aa(box, o, false) : at::upsample_bilinear2d(box, o, false);
          }
          if (interpolation == Interpolation::kBicubic) {
            ref = aa ? at::_upsample_bicubic2d_aa(box, o, false) : at::upsample_bicubic2d(box, o, false);
          }
          EXPECT_EQ(max_difference(out, from_chw(ref)), 0)
              << "C " << C << " mode " << mode << " aa " << aa << " -> " << size[0] << "x" << size[1];
        }
      }
    }
  }
}

TEST(TransformsGeometry, RotateAndAffineEqualTorchvisionsGridSample) {
  TransformScratch scratch;
  for (int64_t C : kChannels) {
    for (const auto& hw : std::vector<std::array<int64_t, 2>>{{37, 53}, {40, 40}}) {
      const ImageU8 image = geometry_image(hw[0], hw[1], C, 4);
      const int64_t H = image.height, W = image.width;
      for (bool bilinear : {false, true}) {
        const auto interpolation = bilinear ? Interpolation::kBilinear : Interpolation::kNearest;
        for (double angle : {30.0, -77.5, 90.0, 270.0, 200.0}) {
          // center (5, 7): the warp, never torch.rot90's fast path
          ImageU8 ours = image;
          rotate_u8(ours, angle, interpolation, false, std::array<double, 2>{5.0, 7.0}, {12.0}, scratch);
          const auto m = inverse_affine_matrix({5.0 - W * 0.5, 7.0 - H * 0.5}, -angle, {0, 0}, 1.0, {0, 0});
          const AtenGrid grid = affine_grid(m, W, H, W, H);
          expect_warp_matches(ours, aten_warp(image, grid.grid, bilinear, std::vector<float>(C, 12.f)), bilinear,
                              grid.fastloops, "rotate " + std::to_string(angle) + " C " + std::to_string(C));
        }
        ImageU8 ours = image;
        affine_u8(ours, 20.0, {3.0, -2.0}, 1.3, {10.0, -5.0}, interpolation, {}, std::nullopt, scratch);
        const auto m = inverse_affine_matrix({0, 0}, 20.0, {3.0, -2.0}, 1.3, {10.0, -5.0});
        const AtenGrid grid = affine_grid(m, W, H, W, H);
        expect_warp_matches(ours, aten_warp(image, grid.grid, bilinear, std::vector<float>(C, 0.f)), bilinear,
                            grid.fastloops, "affine C " + std::to_string(C));
      }
    }
  }
}

TEST(TransformsGeometry, RotateFastPathsAreTorchsRot90) {
  TransformScratch scratch;
  const ImageU8 image = geometry_image(6, 9, 3, 5);
  ImageU8 r = image;
  rotate_u8(r, 90.0, Interpolation::kNearest, true, std::nullopt, {}, scratch);
  EXPECT_EQ(max_difference(r, from_chw(at::rot90(chw(image), 1, {2, 3}))), 0);
  r = image;
  rotate_u8(r, -90.0, Interpolation::kBilinear, true, std::nullopt, {}, scratch);  // -90 % 360 = 270
  EXPECT_EQ(max_difference(r, from_chw(at::rot90(chw(image), 3, {2, 3}))), 0);
  r = image;
  rotate_u8(r, 540.0, Interpolation::kNearest, false, std::nullopt, {}, scratch);
  EXPECT_EQ(max_difference(r, from_chw(at::rot90(chw(image), 2, {2, 3}))), 0);
  r = image;
  rotate_u8(r, 45.0, Interpolation::kNearest, true, std::nullopt, {}, scratch);
  EXPECT_EQ(r.height, 12);  // torchvision: rotate(a 6 x 9 image, 45, expand=True) is 12 x 11
  EXPECT_EQ(r.width, 11);
  EXPECT_THROW(rotate_u8(r, 10.0, Interpolation::kBicubic, false, std::nullopt, {}, scratch), InputError);
}

TEST(TransformsGeometry, PerspectiveEqualsTorchvisionsGridSample) {
  TransformScratch scratch;
  const ImageU8 image = geometry_image(41, 57, 3, 6);
  const QuadPoints start = {{{0, 0}, {56, 0}, {56, 40}, {0, 40}}};
  const QuadPoints end = {{{5, 3}, {50, 1}, {54, 36}, {2, 39}}};
  const auto k = perspective_coefficients(start, end);
  // The end points map onto the start points.
  for (size_t i = 0; i < 4; ++i) {
    const double x = end[i][0], y = end[i][1], d = k[6] * x + k[7] * y + 1;
    EXPECT_NEAR((k[0] * x + k[1] * y + k[2]) / d, start[i][0], 1e-3);
    EXPECT_NEAR((k[3] * x + k[4] * y + k[5]) / d, start[i][1], 1e-3);
  }
  // _perspective_grid with ATen.
  const int64_t oh = 41, ow = 57;
  const at::Tensor theta1 =
      at::tensor({float(k[0]), float(k[1]), float(k[2]), float(k[3]), float(k[4]), float(k[5])}).view({1, 2, 3});
  const at::Tensor theta2 = at::tensor({float(k[6]), float(k[7]), 1.f, float(k[6]), float(k[7]), 1.f}).view({1, 2, 3});
  at::Tensor base = at::empty({1, oh, ow, 3});
  base.select(3, 0).copy_(at::linspace(0.5, ow - 0.5, ow));
  base.select(3, 1).copy_(at::linspace(0.5, oh - 0.5, oh).unsqueeze(-1));
  base.select(3, 2).fill_(1);
  const at::Tensor rescaled = theta1.transpose(1, 2) / at::tensor({0.5f * ow, 0.5f * oh});
  const at::Tensor g1 = base.view({1, oh * ow, 3}).bmm(rescaled);
  const at::Tensor g2 = base.view({1, oh * ow, 3}).bmm(theta2.transpose(1, 2));
  const at::Tensor grid = (g1 / g2 - 1.0).view({1, oh, ow, 2});
  const bool fastloops = grid_is_fastloops(base, rescaled, grid, theta2.transpose(1, 2));
  for (bool bilinear : {false, true}) {
    ImageU8 ours = image;
    perspective_u8(ours, k, bilinear ? Interpolation::kBilinear : Interpolation::kNearest,
                   warp_fill_make(std::vector<double>{1, 2, 3}, 3), scratch);
    expect_warp_matches(ours, aten_warp(image, grid, bilinear, {1.f, 2.f, 3.f}), bilinear, fastloops,
                        bilinear ? "perspective, bilinear" : "perspective, nearest");
  }
}

TEST(TransformsGeometry, GaussianBlurWithinOneLevelOfTorchsConvolution) {
  std::vector<float> w;
  gaussian_kernel1d(3, 1.0, w);  // softmax(-(linspace(-1/sqrt(2), 1/sqrt(2), 3))^2)
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NEAR(w[0], 0.274068619, 1e-6);
  EXPECT_NEAR(w[1], 0.451862762, 1e-6);
  TransformScratch scratch;
  for (int64_t C : kChannels) {
    const ImageU8 image = geometry_image(30, 44, C, 7);
    for (const auto& k : std::vector<std::array<int64_t, 2>>{{3, 5}, {23, 23}, {1, 9}}) {
      ImageU8 ours = image;
      gaussian_blur_u8(ours, k[0], k[1], 1.7, 0.9, scratch);
      std::vector<float> wx, wy;
      gaussian_kernel1d(k[0], 1.7, wx);
      gaussian_kernel1d(k[1], 0.9, wy);
      const at::Tensor kernel = (at::tensor(wy).unsqueeze(-1) * at::tensor(wx)).expand({C, 1, k[1], k[0]});
      const at::Tensor padded =
          at::reflection_pad2d(chw(image).to(at::kFloat), {k[0] / 2, k[0] / 2, k[1] / 2, k[1] / 2});
      const at::Tensor ref = at::conv2d(padded, kernel, std::optional<at::Tensor>(), at::IntArrayRef{1, 1},
                                        at::IntArrayRef{0, 0}, at::IntArrayRef{1, 1}, C)
                                 .round()
                                 .to(at::kByte);
      const int difference = max_difference(ours, from_chw(ref));
      EXPECT_GE(difference, 0);
      EXPECT_LE(difference, 1) << "C " << C << " kernel " << k[0] << "x" << k[1];
    }
  }
  ImageU8 small = geometry_image(5, 5, 1, 8);
  EXPECT_THROW(gaussian_blur_u8(small, 4, 3, 1.0, 1.0, scratch), InputError);   // even
  EXPECT_THROW(gaussian_blur_u8(small, 11, 3, 1.0, 1.0, scratch), InputError);  // padding 5 >= 5 px
}

TEST(TransformsGeometry, KernelsAllocateNothingOnceTheBuffersHaveGrown) {
  TransformScratch scratch;
  ImageU8 image = geometry_image(50, 60, 3, 9);
  const ImageU8 original = image;
  const auto run = [&] {
    image = original;  // same capacity: copy-assigned into the grown buffer
    rotate_u8(image, 33.0, Interpolation::kBilinear, false, std::nullopt, {0.0}, scratch);
    gaussian_blur_u8(image, 5, 5, 1.0, 1.0, scratch);
    pad_u8(image, Padding{4, 4, 4, 4}, PaddingMode::kReflect, std::array<uint8_t, 4>{}.data(), scratch.spare, scratch);
    std::swap(image, scratch.spare);
    resized_crop_u8(image, 0, 0, 40, 40, 32, 32, Interpolation::kBicubic, true, scratch.spare, scratch);
  };
  run();
  run();
  const auto capacities = [&] {
    return std::vector<size_t>{image.pixels.capacity(), scratch.spare.pixels.capacity(), scratch.floats.capacity(),
                               scratch.ints.capacity()};
  };
  const auto before = capacities();
  const uint8_t* buffers[2] = {image.data(), scratch.spare.data()};
  run();
  EXPECT_EQ(capacities(), before);
  EXPECT_TRUE((image.data() == buffers[0] && scratch.spare.data() == buffers[1]) ||
              (image.data() == buffers[1] && scratch.spare.data() == buffers[0]));
}
