// The keypoint kernels (data/transforms/functional/keypoints.h) on points whose results are known by hand:
// torchvision's conventions that differ from the boxes' (a flip maps x to width - 1 - x, clamping to side - 1,
// nothing clamped by a crop), sanitize's groups, and a pipeline moving keypoints beside boxes. Equality with
// torchvision's own kernels on random draws is tests/python/test_keypoints.py's.
#include "fastloop/data/transforms/functional/boxes.h"
#include "fastloop/data/transforms/functional/keypoints.h"
#include "fastloop/data/transforms/pipeline.h"

#include <gtest/gtest.h>

namespace fastloop {
namespace {

TEST(KeyPointKernels, FlipMapsAPixelCentreToItsMirror) {
  std::vector<float> points = {0.f, 0.f, 9.f, 4.f, 2.5f, 1.f};
  keypoints_flip_horizontal(points, 10);
  EXPECT_EQ(points, (std::vector<float>{9.f, 0.f, 0.f, 4.f, 6.5f, 1.f}));
  keypoints_flip_vertical(points, 5);
  EXPECT_EQ(points, (std::vector<float>{9.f, 4.f, 0.f, 0.f, 6.5f, 3.f}));
}

TEST(KeyPointKernels, CropAndPadShiftWithoutClamping) {
  std::vector<float> points = {1.f, 2.f, 30.f, 40.f};
  keypoints_translate(points, -5, -3);  // crop(top 3, left 5)
  EXPECT_EQ(points, (std::vector<float>{-4.f, -1.f, 25.f, 37.f}));
  keypoints_resize(points, 10, 20, 20, 10);
  EXPECT_EQ(points, (std::vector<float>{-2.f, -2.f, 12.5f, 74.f}));
}

TEST(KeyPointKernels, ClampKeepsPointsOnTheLastPixel) {
  std::vector<float> points = {-1.f, 7.f, 12.f, -3.f};
  keypoints_clamp(points, 5, 10);
  EXPECT_EQ(points, (std::vector<float>{0.f, 4.f, 9.f, 0.f}));
}

TEST(KeyPointKernels, SanitizeDropsWholeGroupsAlongTheFirstDimension) {
  // [3, 2] points: group 1 has a point at x = width (outside: x < width is required)
  std::vector<float> points = {0.f, 0.f, 9.f, 4.f, 10.f, 1.f, 2.f, 2.f, 3.f, 3.f, 4.f, 4.f};
  std::vector<int64_t> shape = {3, 2};
  const std::vector<bool> valid = keypoints_valid(points, shape, 5, 10);
  EXPECT_EQ(valid, (std::vector<bool>{true, false, true}));
  keypoints_keep(points, shape, valid);
  EXPECT_EQ(shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(points, (std::vector<float>{0.f, 0.f, 9.f, 4.f, 3.f, 3.f, 4.f, 4.f}));
  std::vector<int64_t> flat = {4};  // [4, 2]: each point is its own entry
  EXPECT_EQ(keypoints_valid({0.f, 0.f, -1.f, 0.f, 9.f, 4.f, 9.f, 5.f}, flat, 5, 10),
            (std::vector<bool>{true, false, true, false}));
}

TEST(KeyPointKernels, AffineTurnsAboutTheCentre) {
  std::vector<float> points = {4.f, 2.f};
  // 90 degrees about (2, 2) (torchvision's rotate turns by -angle): (4, 2) -> (2, 0)
  keypoints_affine(points, forward_affine_matrix({2.0, 2.0}, -90.0, {0.0, 0.0}, 1.0, {0.0, 0.0}));
  EXPECT_NEAR(points[0], 2.f, 1e-5);
  EXPECT_NEAR(points[1], 0.f, 1e-5);
}

TEST(KeyPointKernels, PipelineMovesKeypointsBesideBoxesAndRefusesReflectPadding) {
  ImageU8 image;
  image.reshape(5, 10, 3);
  SampleTargets targets;
  targets.has_keypoints = true;
  targets.keypoints = {1.f, 1.f};
  targets.keypoints_shape = {1};
  TransformScratch scratch;
  Pipeline("Pad(2), RandomHorizontalFlip(p=1.0)").run_targets(image, targets, 1, 0, 0, scratch);
  EXPECT_EQ(targets.keypoints, (std::vector<float>{(14.f - 1.f) - 3.f, 3.f}));
  SampleTargets more = targets;
  EXPECT_THROW(Pipeline("Pad(1, padding_mode='reflect')").run_targets(image, more, 1, 0, 0, scratch), InputError);
}

}  // namespace
}  // namespace fastloop
