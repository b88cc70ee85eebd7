// The operations of torchvision's automatic augmentations (_AutoAugmentBase): each transform's space of
// operations in torchvision's dict order, their magnitude bins as torch.linspace makes them (float32), the
// AutoAugment policies, and _apply_image_or_video_transform over the colour kernels and affine_u8 / rotate_u8.
#pragma once

#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/transform.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace fastloop {

enum class AugOp {
  kIdentity, kShearX, kShearY, kTranslateX, kTranslateY, kRotate, kBrightness, kColor, kContrast, kSharpness,
  kPosterize, kSolarize, kAutoContrast, kEqualize, kInvert
};

/// One entry of an _AUGMENTATION_SPACE: how its magnitudes are made from (num_bins, height, width).
struct AugEntry {
  enum class Bins { kNone, kLinspace, kWidth, kHeight, kPosterize };
  AugOp op;
  Bins bins;
  double start, end;  // linspace(start, end); kWidth/kHeight: end * width / height; kPosterize: top, divisor
  bool is_signed;
};

/// A space: its entries in torchvision's order (draws' op indices refer to them).
struct AugSpace {
  const AugEntry* entries;
  int64_t size;
};
AugSpace auto_augment_space();    // AutoAugment
AugSpace rand_augment_space();    // RandAugment
AugSpace trivial_wide_space();    // TrivialAugmentWide
AugSpace aug_mix_space(bool all_ops);  // AugMix: the partial space, or with the four of all_ops after it

/// float(magnitudes[i]) of `entry` for a height x width image.
double magnitude_at(const AugEntry& entry, int64_t num_bins, int64_t i, int64_t height, int64_t width);

/// The sign draw of a signed operation with magnitudes: torch.rand(()) <= 0.5 negates.
double signed_magnitude(const AugEntry& entry, double magnitude, Draws& draws);

/// The warp's settings, as _AutoAugmentBase keeps them.
struct AugGeometry {
  Interpolation interpolation = Interpolation::kNearest;
  std::optional<std::vector<double>> fill;  // None: no mask (grid_sample's zeros stay, as torchvision's fill=None)
};

/// _AutoAugmentBase._apply_image_or_video_transform.
void aug_op_apply(ImageU8& image, AugOp op, double magnitude, const AugGeometry& geometry, TransformScratch& scratch);

/// One sub-policy step of AutoAugment: an operation, its probability and magnitude bin (-1: none).
struct PolicyStep {
  AugOp op;
  float probability;  // compared with torch.rand(()) in float32
  int magnitude_bin;
};
using SubPolicy = std::array<PolicyStep, 2>;

enum class AutoAugmentPolicy { kImageNet, kCifar10, kSvhn };

/// torchvision's AutoAugment._get_policies(policy): 25 sub-policies.
const SubPolicy* auto_augment_policies(AutoAugmentPolicy policy, int64_t& count);

} // namespace fastloop
