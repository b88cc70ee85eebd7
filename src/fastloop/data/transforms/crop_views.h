// FiveCrop and TenCrop, whose result is a tuple of crops (torchvision applies the transforms after them to each
// crop, with one draw for the tuple; DataLoader's collate makes a batch of them a list of 5 or 10 tensors
// [B, C, H, W]). fastloop runs such a pipeline as views (views.h) that draw alike: one pipeline per crop, the
// FiveCrop replaced by `_CropView(size, index, vertical_flip)`, the crop at that place of torchvision's tuple
// (a name no torchvision class has). FiveCrop and TenCrop themselves compile in no pipeline of one image.
#pragma once

#include "fastloop/data/transforms/transform.h"

#include <string>
#include <vector>

namespace fastloop {

/// The pipelines `specs` makes, one per image it returns.
struct CropViews {
  std::vector<std::vector<TransformSpec>> views;  // `specs` alone when it has no FiveCrop / TenCrop
  std::string crop_repr;    // the FiveCrop / TenCrop as its canonical spelling ("" without one)
  std::string view_marker;  // view 0's _CropView in its canonical spelling, which a repr writes as crop_repr
};

/// With a FiveCrop or TenCrop at the top level or in Composes (flattened), 5 or 10 views; without, `specs`
/// unchanged. One inside RandomApply, RandomChoice or RandomOrder, or a second one, throws TransformTypeError;
/// arguments out of torchvision's range throw InputError with its messages.
CropViews crop_views_expand(const std::vector<TransformSpec>& specs);

}  // namespace fastloop
