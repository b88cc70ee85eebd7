// The detection and segmentation transforms of torchvision's reference recipes (SSD, Mask R-CNN's large scale
// jitter, DETR): RandomZoomOut, RandomIoUCrop, FixedSizeCrop (detection_transforms.cpp), RandomShortestSize,
// RandomResize, ScaleJitter (random_resize_transforms.cpp) and RandomPhotometricDistort
// (photometric_distort.cpp), and the one thing they add to Transform: draws that depend on the sample's boxes.
#pragma once

#include "fastloop/data/transforms/transform.h"

namespace fastloop {

/// A transform whose draws depend on the sample's boxes as well as its size (RandomIoUCrop keeps drawing until
/// a crop holds a box's centre): what apply_targets() draws for `targets`, for the replay tests. Its draw()
/// without boxes throws the TypeError apply() throws.
class TargetDrawTransform {
 public:
  virtual ~TargetDrawTransform() = default;
  virtual TransformDraw draw_targets(int64_t height, int64_t width, const SampleTargets& targets,
                                     Draws& draws) const = 0;
};

/// The two halves of transforms_register_detection (families.h) that live in their own files.
void transforms_register_random_resizes(TransformRegistry& registry);  // RandomShortestSize, RandomResize, ScaleJitter
void transforms_register_photometric(TransformRegistry& registry);     // RandomPhotometricDistort

}  // namespace fastloop
