// The fused random resize + flip + crop (data/transforms/resize_crop_fusion.h) against the same transforms run one
// after another with the same draws: byte-equal images and masks, equal boxes, over many draws of crops inside
// the resized image and past its edges, every interpolation, 1, 3 and 4 channels, with and without targets.
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/resize_crop_fusion.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fastloop {
namespace {

constexpr uint64_t kSeed = 20261207;

ImageU8 random_image(int64_t height, int64_t width, int64_t channels, uint32_t seed) {
  std::mt19937 rng(seed);
  ImageU8 image;
  image.reshape(height, width, channels);
  for (int64_t i = 0; i < image.bytes(); ++i) image.data()[i] = static_cast<uint8_t>(rng() % 7 == 0 ? 255 : rng());
  return image;
}

SampleTargets random_targets(int64_t height, int64_t width, uint32_t seed) {
  SampleTargets targets;
  targets.has_boxes = true, targets.instance_masks = true;
  std::mt19937 rng(seed);
  for (int b = 0; b < 3; ++b) {
    const double x = rng() % width, y = rng() % height;
    targets.boxes.insert(targets.boxes.end(), {x, y, x + 1 + rng() % 20, y + 1 + rng() % 20});
    targets.labels.push_back(b + 1), targets.kept.push_back(b);
    targets.masks.push_back(random_image(height, width, 1, seed + 10 + b));
  }
  return targets;
}

std::vector<uint8_t> bytes(const ImageU8& image) {
  return {image.data(), image.data() + image.bytes()};
}

// The uint8 transforms of `spec` one after another, each with its stream (Pipeline::run_targets before fusion).
void run_unfused(const std::string& spec, ImageU8& image, SampleTargets* targets, int64_t index) {
  TransformScratch scratch;
  const auto transforms = pipeline_make(spec_parse(spec));
  for (size_t k = 0; k < transforms.size(); ++k) {
    Draws draws = pipeline_draws(kSeed, 3, index, static_cast<int64_t>(k));
    if (targets) {
      transforms[k]->apply_targets(image, *targets, draws, scratch);
    } else {
      transforms[k]->apply(image, draws, scratch);
    }
  }
}

void expect_fused_equals_unfused(const std::string& spec, int64_t channels) {
  const Pipeline pipeline(spec);
  ASSERT_TRUE(resize_crop_group(pipeline_make(spec_parse(spec)), 0)) << spec;
  TransformScratch scratch;
  for (int64_t index = 0; index < 40; ++index) {
    const int64_t height = 30 + index % 7 * 9, width = 25 + index % 5 * 13;
    const auto seed = static_cast<uint32_t>(index);
    ImageU8 fused = random_image(height, width, channels, seed), unfused = fused;
    SampleTargets fused_targets = random_targets(height, width, seed), unfused_targets = fused_targets;
    pipeline.run_targets(fused, fused_targets, kSeed, 3, index, scratch);
    run_unfused(spec, unfused, &unfused_targets, index);
    const std::string what = spec + ", sample " + std::to_string(index);
    ASSERT_EQ(fused.height, unfused.height) << what;
    ASSERT_EQ(fused.width, unfused.width) << what;
    ASSERT_EQ(bytes(fused), bytes(unfused)) << what;
    ASSERT_EQ(fused_targets.boxes, unfused_targets.boxes) << what;
    ASSERT_EQ(fused_targets.masks.size(), unfused_targets.masks.size()) << what;
    for (size_t m = 0; m < fused_targets.masks.size(); ++m)
      ASSERT_EQ(bytes(fused_targets.masks[m]), bytes(unfused_targets.masks[m])) << what << ", mask " << m;
    ImageU8 alone = random_image(height, width, channels, seed), alone_unfused = alone;
    pipeline.run_u8(alone, kSeed, 3, index, scratch);
    run_unfused(spec, alone_unfused, nullptr, index);
    ASSERT_EQ(bytes(alone), bytes(alone_unfused)) << what << ", without targets";
  }
}

TEST(ResizeCropFusion, FusedResizeFlipCropEqualsTheTransformsOneAfterAnother) {
  const std::string fill = "fill=(('Mask', 255), ('others', 7))";
  for (int64_t channels : {1, 3, 4}) {
    expect_fused_equals_unfused("RandomResize(20, 120), RandomHorizontalFlip(), RandomCrop(48, pad_if_needed=True, " +
                                    fill + ")", channels);
    expect_fused_equals_unfused("RandomShortestSize((30, 60, 110)), RandomVerticalFlip(), "
                                "RandomCrop((40, 56), padding=3, pad_if_needed=True, fill=5)", channels);
    expect_fused_equals_unfused("ScaleJitter((64, 48)), RandomCrop(30, pad_if_needed=True)", channels);
  }
  for (const char* mode : {"nearest", "nearest-exact", "bicubic"})
    expect_fused_equals_unfused(std::string("RandomResize(20, 120, interpolation='") + mode +
                                    "'), RandomHorizontalFlip(p=1.0), RandomCrop(36, pad_if_needed=True)", 3);
  expect_fused_equals_unfused("RandomResize(20, 120, antialias=False), RandomCrop(36, pad_if_needed=True)", 3);
}

TEST(ResizeCropFusion, OnlyAResizeAnOptionalFlipAndAConstantPaddedCropFuse) {
  const auto group = [](const std::string& spec) { return resize_crop_group(pipeline_make(spec_parse(spec)), 0); };
  ASSERT_TRUE(group("RandomResize(20, 40), RandomHorizontalFlip(), RandomCrop(16)"));
  EXPECT_EQ(group("RandomResize(20, 40), RandomHorizontalFlip(), RandomCrop(16)")->count, 3u);
  EXPECT_EQ(group("RandomResize(20, 40), RandomCrop(16)")->count, 2u);
  EXPECT_FALSE(group("RandomResize(20, 40), RandomCrop(16, padding=2, padding_mode='reflect')"));
  EXPECT_FALSE(group("RandomResize(20, 40), RandomHorizontalFlip(), RandomHorizontalFlip(), RandomCrop(16)"));
  EXPECT_FALSE(group("RandomHorizontalFlip(), RandomResize(20, 40), RandomCrop(16)"));
}

}  // namespace
}  // namespace fastloop
