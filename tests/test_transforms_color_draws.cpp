// The colour transforms as torchvision's classes (ColorJitter, the Random* wrappers, AutoAugment, RandAugment,
// TrivialAugmentWide, AugMix): their reprs, the parameters they draw and the ranges those come from, their
// runs on RGB and grey images, and the arguments they refuse. Their kernels' bytes: test_transforms_color.cpp.
#include "color_test_images.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/transforms/registry.h"
#include "fastloop/data/transforms/spec.h"
#include "fastloop/data/transforms/transform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace fastloop {

using test::color_test_image;
using test::kColorShapes;

namespace {

TransformPtr color_test_make(const std::string& text) {
  return transform_registry().make(spec_parse(text).at(0));
}

std::vector<double> color_test_param(const TransformDraw& draw, const std::string& name) {
  for (const auto& [key, values] : draw)
    if (key == name) return values;
  ADD_FAILURE() << "no " << name;
  return {};
}

} // namespace

TEST(TransformsColor, ReprsParseBackToTheSameTransform) {
  for (const char* text : {"ColorJitter(0.4, 0.4, 0.4, 0.1)", "ColorJitter(brightness=(0.5, 1.5))", "ColorJitter()",
                           "Grayscale(3)", "RandomGrayscale(0.2)", "RandomInvert()", "RandomPosterize(3)",
                           "RandomSolarize(threshold=192.0, p=0.3)", "RandomAdjustSharpness(2)",
                           "RandomAutocontrast(p=0.1)", "RandomEqualize()", "TrivialAugmentWide()",
                           "RandAugment(2, 9, fill=[1, 2, 3])", "AutoAugment(AutoAugmentPolicy.SVHN)",
                           "AutoAugment('cifar10', interpolation=InterpolationMode.BILINEAR)", "AugMix(all_ops=False)"}) {
    const std::string repr = color_test_make(text)->repr();
    EXPECT_EQ(color_test_make(repr)->repr(), repr) << text;
  }
  EXPECT_EQ(color_test_make("ColorJitter(0.4, 0.4, 0.4, 0.1)")->repr(),
            "ColorJitter(brightness=(0.6, 1.4), contrast=(0.6, 1.4), saturation=(0.6, 1.4), hue=(-0.1, 0.1))");
  EXPECT_EQ(color_test_make("AutoAugment()")->repr(),
            "AutoAugment(policy=AutoAugmentPolicy.IMAGENET, interpolation=InterpolationMode.NEAREST)");
}

TEST(TransformsColor, ColorJitterDrawsAnOrderAndFactorsInTheirRanges) {
  auto jitter = color_test_make("ColorJitter(brightness=0.4, saturation=(0.2, 0.3), hue=0.1)");
  std::array<int, 4> first{};
  for (uint64_t i = 0; i < 2000; ++i) {
    Draws draws(i);
    const TransformDraw d = jitter->draw(10, 10, draws);
    auto order = color_test_param(d, "fn_idx");
    ASSERT_EQ(order.size(), 4u);
    ++first[static_cast<int>(order[0])];
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<double>{0, 1, 2, 3}));
    const double b = color_test_param(d, "brightness_factor").at(0), s = color_test_param(d, "saturation_factor").at(0);
    EXPECT_TRUE(b >= 0.6 && b <= 1.4 && s >= 0.2 && s <= 0.3) << b << " " << s;
    EXPECT_TRUE(color_test_param(d, "contrast_factor").empty());  // None: torchvision draws nothing for it
  }
  for (int n : first) EXPECT_NEAR(n, 500, 100);
}

TEST(TransformsColor, RandomApplyFollowsP) {
  auto invert = color_test_make("RandomInvert(p=0.3)");
  int applied = 0;
  for (uint64_t i = 0; i < 4000; ++i) {
    Draws draws(i);
    applied += color_test_param(invert->draw(4, 4, draws), "apply").at(0) == 1.0;
  }
  EXPECT_NEAR(applied, 1200, 120);
  ImageU8 image = color_test_image(9, 9, 3, 5), before = image;
  TransformScratch scratch;
  Draws never(1);
  color_test_make("RandomInvert(p=0)")->apply(image, never, scratch);
  EXPECT_EQ(image.pixels, before.pixels);
}

TEST(TransformsColor, AutoAugmentsDrawFromTheirSpaces) {
  auto trivial = color_test_make("TrivialAugmentWide(num_magnitude_bins=5)");
  std::array<int, 14> counts{};
  for (uint64_t i = 0; i < 14000; ++i) {
    Draws draws(i);
    const TransformDraw d = trivial->draw(32, 32, draws);
    const int op = static_cast<int>(color_test_param(d, "op_index").at(0));
    const double m = color_test_param(d, "magnitude").at(0);
    ++counts.at(op);
    if (op == 5) {  // Rotate: linspace(0, 135, 5), either sign
      const double a = std::fabs(m);
      EXPECT_TRUE(a == 0 || a == 33.75 || a == 67.5 || a == 101.25 || a == 135) << a;
    }
    // Posterize: 8 - i / (4 / 6) rounded half to even: 8, 6.5 -> 6, 5, 3.5 -> 4, 2.
    if (op == 10) {
      EXPECT_TRUE(m == 8 || m == 6 || m == 5 || m == 4 || m == 2) << m;
    }
  }
  for (int n : counts) EXPECT_NEAR(n, 1000, 130);
  auto rand_augment = color_test_make("RandAugment(num_ops=3, magnitude=30)");
  Draws draws(7);
  const TransformDraw d = rand_augment->draw(331, 662, draws);
  EXPECT_EQ(color_test_param(d, "op_index").size(), 3u);
  auto aug_mix = color_test_make("AugMix(mixture_width=4, chain_depth=2)");
  Draws mix_draws(3);
  const TransformDraw m = aug_mix->draw(20, 20, mix_draws);
  const auto beta = color_test_param(m, "beta"), weights = color_test_param(m, "weights");
  EXPECT_NEAR(beta[0] + beta[1], 1.0, 1e-6);
  EXPECT_NEAR(std::accumulate(weights.begin(), weights.end(), 0.0), beta[1], 1e-6);
  EXPECT_EQ(color_test_param(m, "op_index").size(), 8u);
}

TEST(TransformsColor, TransformsRunOnRgbAndGreyImages) {
  TransformScratch scratch;
  for (const char* text : {"ColorJitter(0.4, 0.4, 0.4, 0.1)", "RandomGrayscale(1)", "RandomAdjustSharpness(2, p=1)",
                           "TrivialAugmentWide()", "RandAugment()", "AutoAugment(AutoAugmentPolicy.CIFAR10)",
                           "AugMix()", "AugMix(severity=10, mixture_width=2, chain_depth=3, alpha=0.5)"}) {
    auto transform = color_test_make(text);
    for (const auto& s : kColorShapes) {
      for (uint64_t i = 0; i < 8; ++i) {
        ImageU8 image = color_test_image(s.h, s.w, s.c, static_cast<uint32_t>(i));
        Draws draws(i);
        transform->apply(image, draws, scratch);
        EXPECT_EQ(image.height, s.h);
        EXPECT_EQ(image.width, s.w);
        EXPECT_EQ(image.channels, s.c) << text;
      }
    }
  }
}

TEST(TransformsColor, ArgumentsAreRefusedAsTorchvisionRefusesThem) {
  EXPECT_THROW(color_test_make("ColorJitter(brightness=-1)"), InputError);
  EXPECT_THROW(color_test_make("ColorJitter(hue=0.7)"), InputError);
  EXPECT_THROW(color_test_make("ColorJitter(contrast=(1, 2, 3))"), TransformTypeError);
  EXPECT_THROW(color_test_make("RandomInvert(p=1.5)"), InputError);
  EXPECT_THROW(color_test_make("RandomPosterize()"), TransformTypeError);
  EXPECT_THROW(color_test_make("RandomPosterize(bits=2.5)"), TransformTypeError);
  EXPECT_THROW(color_test_make("RandomSolarize(threshold=300)"), TransformTypeError);
  EXPECT_THROW(color_test_make("Grayscale(2)"), InputError);
  EXPECT_THROW(color_test_make("RandAugment(num_ops=-1)"), InputError);
  EXPECT_THROW(color_test_make("RandAugment(magnitude=31)"), InputError);
  EXPECT_THROW(color_test_make("TrivialAugmentWide(interpolation=InterpolationMode.BICUBIC)"), InputError);
  EXPECT_THROW(color_test_make("AutoAugment(policy='mnist')"), InputError);
  EXPECT_THROW(color_test_make("AugMix(severity=11)"), InputError);
  try {
    color_test_make("ColorJitter(saturation=(1.5, 0.5))");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "saturation values should be between (0, inf) and increasing, but got [1.5, 0.5].");
  }
}

} // namespace fastloop
