// RandomResizedCrop, Resize and CenterCrop as transforms.v2 defines them (resize_transforms.cpp), and what a
// loader needs to fuse the first of them into the decode: the box of the source image the transform reads
// and the size it resizes that box to, so only that region is decoded, at the smallest JPEG DCT scale that
// still covers the output.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <cstdint>

namespace fastloop {

/// What a crop-or-resize transform does to a height x width image: rows [top, top + height) and columns
/// [left, left + width) of it, resized to out_height x out_width with `interpolation` and `antialias`.
/// A plan that is not `exact` (CenterCrop larger than the image: it pads) cannot be fused.
struct ResizePlan {
  int64_t top = 0, left = 0, height = 0, width = 0;  // pixels of the source image
  int64_t out_height = 0, out_width = 0;             // pixels
  Interpolation interpolation = Interpolation::kBilinear;
  bool antialias = true;
  bool exact = true;
};

/// A transform whose whole effect is a ResizePlan (RandomResizedCrop, Resize, CenterCrop). plan() draws
/// exactly what apply() draws.
class ResizePlanTransform : public Transform {
 public:
  virtual ResizePlan plan(int64_t height, int64_t width, Draws& draws) const = 0;
};

/// torchvision's _compute_resized_output_size for Resize(size, max_size) (size empty: None): {height, width}.
std::pair<int64_t, int64_t> resize_output_size(int64_t height, int64_t width, const std::vector<int64_t>& size,
                                               int64_t max_size);

} // namespace fastloop
