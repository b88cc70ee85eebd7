// The warps on float images (float_ops.h): RandomRotation, RandomAffine and RandomPerspective after the
// conversion to float, as torchvision's rotate_image / affine_image / perspective_image run on float tensors.
#pragma once

#include "fastloop/data/transforms/float_step.h"

#include <optional>

namespace fastloop {

/// The float step of a RandomRotation, RandomAffine or RandomPerspective; nullopt for any other transform.
std::optional<FloatStep> float_warp_step(const TransformPtr& transform);

} // namespace fastloop
