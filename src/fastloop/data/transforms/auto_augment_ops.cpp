// The automatic augmentations' operations (auto_augment_ops.h).
#include "fastloop/data/transforms/auto_augment_ops.h"

#include "fastloop/data/transforms/color_args.h"
#include "fastloop/data/transforms/functional/affine.h"
#include "fastloop/data/transforms/functional/warp.h"
#include "fastloop/data/transforms/functional/color.h"
#include "fastloop/data/transforms/functional/histogram.h"

#include <cmath>
#include <iterator>
#include <optional>

namespace fastloop {
namespace {

using B = AugEntry::Bins;

// The spaces in torchvision's dict order (op indices in draws refer to these).
const AugEntry kAutoAugmentSpace[] = {
    {AugOp::kShearX, B::kLinspace, 0, 0.3, true},          {AugOp::kShearY, B::kLinspace, 0, 0.3, true},
    {AugOp::kTranslateX, B::kWidth, 0, 150.0 / 331.0, true}, {AugOp::kTranslateY, B::kHeight, 0, 150.0 / 331.0, true},
    {AugOp::kRotate, B::kLinspace, 0, 30, true},           {AugOp::kBrightness, B::kLinspace, 0, 0.9, true},
    {AugOp::kColor, B::kLinspace, 0, 0.9, true},           {AugOp::kContrast, B::kLinspace, 0, 0.9, true},
    {AugOp::kSharpness, B::kLinspace, 0, 0.9, true},       {AugOp::kPosterize, B::kPosterize, 8, 4, false},
    {AugOp::kSolarize, B::kLinspace, 1, 0, false},         {AugOp::kAutoContrast, B::kNone, 0, 0, false},
    {AugOp::kEqualize, B::kNone, 0, 0, false},             {AugOp::kInvert, B::kNone, 0, 0, false}};
const AugEntry kRandAugmentSpace[] = {
    {AugOp::kIdentity, B::kNone, 0, 0, false},             {AugOp::kShearX, B::kLinspace, 0, 0.3, true},
    {AugOp::kShearY, B::kLinspace, 0, 0.3, true},          {AugOp::kTranslateX, B::kWidth, 0, 150.0 / 331.0, true},
    {AugOp::kTranslateY, B::kHeight, 0, 150.0 / 331.0, true}, {AugOp::kRotate, B::kLinspace, 0, 30, true},
    {AugOp::kBrightness, B::kLinspace, 0, 0.9, true},      {AugOp::kColor, B::kLinspace, 0, 0.9, true},
    {AugOp::kContrast, B::kLinspace, 0, 0.9, true},        {AugOp::kSharpness, B::kLinspace, 0, 0.9, true},
    {AugOp::kPosterize, B::kPosterize, 8, 4, false},       {AugOp::kSolarize, B::kLinspace, 1, 0, false},
    {AugOp::kAutoContrast, B::kNone, 0, 0, false},         {AugOp::kEqualize, B::kNone, 0, 0, false}};
const AugEntry kTrivialWideSpace[] = {
    {AugOp::kIdentity, B::kNone, 0, 0, false},             {AugOp::kShearX, B::kLinspace, 0, 0.99, true},
    {AugOp::kShearY, B::kLinspace, 0, 0.99, true},         {AugOp::kTranslateX, B::kLinspace, 0, 32, true},
    {AugOp::kTranslateY, B::kLinspace, 0, 32, true},       {AugOp::kRotate, B::kLinspace, 0, 135, true},
    {AugOp::kBrightness, B::kLinspace, 0, 0.99, true},     {AugOp::kColor, B::kLinspace, 0, 0.99, true},
    {AugOp::kContrast, B::kLinspace, 0, 0.99, true},       {AugOp::kSharpness, B::kLinspace, 0, 0.99, true},
    {AugOp::kPosterize, B::kPosterize, 8, 6, false},       {AugOp::kSolarize, B::kLinspace, 1, 0, false},
    {AugOp::kAutoContrast, B::kNone, 0, 0, false},         {AugOp::kEqualize, B::kNone, 0, 0, false}};
// AugMix: the partial space, then the four of all_ops.
const AugEntry kAugMixSpace[] = {
    {AugOp::kShearX, B::kLinspace, 0, 0.3, true},          {AugOp::kShearY, B::kLinspace, 0, 0.3, true},
    {AugOp::kTranslateX, B::kWidth, 0, 1.0 / 3.0, true},   {AugOp::kTranslateY, B::kHeight, 0, 1.0 / 3.0, true},
    {AugOp::kRotate, B::kLinspace, 0, 30, true},           {AugOp::kPosterize, B::kPosterize, 4, 4, false},
    {AugOp::kSolarize, B::kLinspace, 1, 0, false},         {AugOp::kAutoContrast, B::kNone, 0, 0, false},
    {AugOp::kEqualize, B::kNone, 0, 0, false},             {AugOp::kBrightness, B::kLinspace, 0, 0.9, true},
    {AugOp::kColor, B::kLinspace, 0, 0.9, true},           {AugOp::kContrast, B::kLinspace, 0, 0.9, true},
    {AugOp::kSharpness, B::kLinspace, 0, 0.9, true}};
constexpr int64_t kAugMixPartialOps = 9;

/// torch.linspace(start, end, steps)[i] in float32 (ATen's CPU formula: from the start for the first half,
/// from the end for the second).
double linspace_at(double start, double end, int64_t steps, int64_t i) {
  const float s = static_cast<float>(start), e = static_cast<float>(end);
  if (steps == 1) return s;
  const float step = (e - s) / static_cast<float>(steps - 1);
  return i < steps / 2 ? s + step * static_cast<float>(i) : e - step * static_cast<float>(steps - i - 1);
}

// torchvision's policies, in its order (generated from torchvision 0.29's AutoAugment._get_policies).
const SubPolicy kImageNetPolicy[] = {
    {{{AugOp::kPosterize, 0.4f, 8}, {AugOp::kRotate, 0.6f, 9}}},
    {{{AugOp::kSolarize, 0.6f, 5}, {AugOp::kAutoContrast, 0.6f, -1}}},
    {{{AugOp::kEqualize, 0.8f, -1}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kPosterize, 0.6f, 7}, {AugOp::kPosterize, 0.6f, 6}}},
    {{{AugOp::kEqualize, 0.4f, -1}, {AugOp::kSolarize, 0.2f, 4}}},
    {{{AugOp::kEqualize, 0.4f, -1}, {AugOp::kRotate, 0.8f, 8}}},
    {{{AugOp::kSolarize, 0.6f, 3}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kPosterize, 0.8f, 5}, {AugOp::kEqualize, 1.0f, -1}}},
    {{{AugOp::kRotate, 0.2f, 3}, {AugOp::kSolarize, 0.6f, 8}}},
    {{{AugOp::kEqualize, 0.6f, -1}, {AugOp::kPosterize, 0.4f, 6}}},
    {{{AugOp::kRotate, 0.8f, 8}, {AugOp::kColor, 0.4f, 0}}},
    {{{AugOp::kRotate, 0.4f, 9}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kEqualize, 0.0f, -1}, {AugOp::kEqualize, 0.8f, -1}}},
    {{{AugOp::kInvert, 0.6f, -1}, {AugOp::kEqualize, 1.0f, -1}}},
    {{{AugOp::kColor, 0.6f, 4}, {AugOp::kContrast, 1.0f, 8}}},
    {{{AugOp::kRotate, 0.8f, 8}, {AugOp::kColor, 1.0f, 2}}},
    {{{AugOp::kColor, 0.8f, 8}, {AugOp::kSolarize, 0.8f, 7}}},
    {{{AugOp::kSharpness, 0.4f, 7}, {AugOp::kInvert, 0.6f, -1}}},
    {{{AugOp::kShearX, 0.6f, 5}, {AugOp::kEqualize, 1.0f, -1}}},
    {{{AugOp::kColor, 0.4f, 0}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kEqualize, 0.4f, -1}, {AugOp::kSolarize, 0.2f, 4}}},
    {{{AugOp::kSolarize, 0.6f, 5}, {AugOp::kAutoContrast, 0.6f, -1}}},
    {{{AugOp::kInvert, 0.6f, -1}, {AugOp::kEqualize, 1.0f, -1}}},
    {{{AugOp::kColor, 0.6f, 4}, {AugOp::kContrast, 1.0f, 8}}},
    {{{AugOp::kEqualize, 0.8f, -1}, {AugOp::kEqualize, 0.6f, -1}}}};
const SubPolicy kCifar10Policy[] = {
    {{{AugOp::kInvert, 0.1f, -1}, {AugOp::kContrast, 0.2f, 6}}},
    {{{AugOp::kRotate, 0.7f, 2}, {AugOp::kTranslateX, 0.3f, 9}}},
    {{{AugOp::kSharpness, 0.8f, 1}, {AugOp::kSharpness, 0.9f, 3}}},
    {{{AugOp::kShearY, 0.5f, 8}, {AugOp::kTranslateY, 0.7f, 9}}},
    {{{AugOp::kAutoContrast, 0.5f, -1}, {AugOp::kEqualize, 0.9f, -1}}},
    {{{AugOp::kShearY, 0.2f, 7}, {AugOp::kPosterize, 0.3f, 7}}},
    {{{AugOp::kColor, 0.4f, 3}, {AugOp::kBrightness, 0.6f, 7}}},
    {{{AugOp::kSharpness, 0.3f, 9}, {AugOp::kBrightness, 0.7f, 9}}},
    {{{AugOp::kEqualize, 0.6f, -1}, {AugOp::kEqualize, 0.5f, -1}}},
    {{{AugOp::kContrast, 0.6f, 7}, {AugOp::kSharpness, 0.6f, 5}}},
    {{{AugOp::kColor, 0.7f, 7}, {AugOp::kTranslateX, 0.5f, 8}}},
    {{{AugOp::kEqualize, 0.3f, -1}, {AugOp::kAutoContrast, 0.4f, -1}}},
    {{{AugOp::kTranslateY, 0.4f, 3}, {AugOp::kSharpness, 0.2f, 6}}},
    {{{AugOp::kBrightness, 0.9f, 6}, {AugOp::kColor, 0.2f, 8}}},
    {{{AugOp::kSolarize, 0.5f, 2}, {AugOp::kInvert, 0.0f, -1}}},
    {{{AugOp::kEqualize, 0.2f, -1}, {AugOp::kAutoContrast, 0.6f, -1}}},
    {{{AugOp::kEqualize, 0.2f, -1}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kColor, 0.9f, 9}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kAutoContrast, 0.8f, -1}, {AugOp::kSolarize, 0.2f, 8}}},
    {{{AugOp::kBrightness, 0.1f, 3}, {AugOp::kColor, 0.7f, 0}}},
    {{{AugOp::kSolarize, 0.4f, 5}, {AugOp::kAutoContrast, 0.9f, -1}}},
    {{{AugOp::kTranslateY, 0.9f, 9}, {AugOp::kTranslateY, 0.7f, 9}}},
    {{{AugOp::kAutoContrast, 0.9f, -1}, {AugOp::kSolarize, 0.8f, 3}}},
    {{{AugOp::kEqualize, 0.8f, -1}, {AugOp::kInvert, 0.1f, -1}}},
    {{{AugOp::kTranslateY, 0.7f, 9}, {AugOp::kAutoContrast, 0.9f, -1}}}};
const SubPolicy kSvhnPolicy[] = {
    {{{AugOp::kShearX, 0.9f, 4}, {AugOp::kInvert, 0.2f, -1}}},
    {{{AugOp::kShearY, 0.9f, 8}, {AugOp::kInvert, 0.7f, -1}}},
    {{{AugOp::kEqualize, 0.6f, -1}, {AugOp::kSolarize, 0.6f, 6}}},
    {{{AugOp::kInvert, 0.9f, -1}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kEqualize, 0.6f, -1}, {AugOp::kRotate, 0.9f, 3}}},
    {{{AugOp::kShearX, 0.9f, 4}, {AugOp::kAutoContrast, 0.8f, -1}}},
    {{{AugOp::kShearY, 0.9f, 8}, {AugOp::kInvert, 0.4f, -1}}},
    {{{AugOp::kShearY, 0.9f, 5}, {AugOp::kSolarize, 0.2f, 6}}},
    {{{AugOp::kInvert, 0.9f, -1}, {AugOp::kAutoContrast, 0.8f, -1}}},
    {{{AugOp::kEqualize, 0.6f, -1}, {AugOp::kRotate, 0.9f, 3}}},
    {{{AugOp::kShearX, 0.9f, 4}, {AugOp::kSolarize, 0.3f, 3}}},
    {{{AugOp::kShearY, 0.8f, 8}, {AugOp::kInvert, 0.7f, -1}}},
    {{{AugOp::kEqualize, 0.9f, -1}, {AugOp::kTranslateY, 0.6f, 6}}},
    {{{AugOp::kInvert, 0.9f, -1}, {AugOp::kEqualize, 0.6f, -1}}},
    {{{AugOp::kContrast, 0.3f, 3}, {AugOp::kRotate, 0.8f, 4}}},
    {{{AugOp::kInvert, 0.8f, -1}, {AugOp::kTranslateY, 0.0f, 2}}},
    {{{AugOp::kShearY, 0.7f, 6}, {AugOp::kSolarize, 0.4f, 8}}},
    {{{AugOp::kInvert, 0.6f, -1}, {AugOp::kRotate, 0.8f, 4}}},
    {{{AugOp::kShearY, 0.3f, 7}, {AugOp::kTranslateX, 0.9f, 3}}},
    {{{AugOp::kShearX, 0.1f, 6}, {AugOp::kInvert, 0.6f, -1}}},
    {{{AugOp::kSolarize, 0.7f, 2}, {AugOp::kTranslateY, 0.6f, 7}}},
    {{{AugOp::kShearY, 0.8f, 4}, {AugOp::kInvert, 0.8f, -1}}},
    {{{AugOp::kShearX, 0.7f, 9}, {AugOp::kTranslateY, 0.8f, 3}}},
    {{{AugOp::kShearY, 0.8f, 5}, {AugOp::kAutoContrast, 0.7f, -1}}},
    {{{AugOp::kShearX, 0.7f, 2}, {AugOp::kInvert, 0.1f, -1}}}};



} // namespace

AugSpace auto_augment_space() { return {kAutoAugmentSpace, static_cast<int64_t>(std::size(kAutoAugmentSpace))}; }
AugSpace rand_augment_space() { return {kRandAugmentSpace, static_cast<int64_t>(std::size(kRandAugmentSpace))}; }
AugSpace trivial_wide_space() { return {kTrivialWideSpace, static_cast<int64_t>(std::size(kTrivialWideSpace))}; }
AugSpace aug_mix_space(bool all_ops) {
  return {kAugMixSpace, all_ops ? static_cast<int64_t>(std::size(kAugMixSpace)) : kAugMixPartialOps};
}

const SubPolicy* auto_augment_policies(AutoAugmentPolicy policy, int64_t& count) {
  if (policy == AutoAugmentPolicy::kCifar10) return count = std::size(kCifar10Policy), kCifar10Policy;
  if (policy == AutoAugmentPolicy::kSvhn) return count = std::size(kSvhnPolicy), kSvhnPolicy;
  return count = std::size(kImageNetPolicy), kImageNetPolicy;
}

/// float(magnitudes[i]) of `entry` for a height x width image.
double magnitude_at(const AugEntry& entry, int64_t num_bins, int64_t i, int64_t height, int64_t width) {
  switch (entry.bins) {
    case B::kNone: return 0.0;
    case B::kLinspace: return linspace_at(entry.start, entry.end, num_bins, i);
    case B::kWidth: return linspace_at(0.0, entry.end * static_cast<double>(width), num_bins, i);
    case B::kHeight: return linspace_at(0.0, entry.end * static_cast<double>(height), num_bins, i);
    case B::kPosterize: {  // (top - arange(n) / ((n - 1) / divisor)).round().int(), in float32
      const float q = static_cast<float>(i) / static_cast<float>((num_bins - 1) / entry.end);
      return static_cast<double>(static_cast<int>(std::nearbyint(static_cast<float>(entry.start) - q)));
    }
  }
  return 0.0;
}

/// The sign draw of a signed operation: torch.rand(()) <= 0.5 negates.
double signed_magnitude(const AugEntry& entry, double magnitude, Draws& draws) {
  if (entry.bins != B::kNone && entry.is_signed && torch_rand(draws) <= 0.5f) return -magnitude;
  return magnitude;
}

/// _AutoAugmentBase._apply_image_or_video_transform.
void aug_op_apply(ImageU8& image, AugOp op, double magnitude, const AugGeometry& geometry, TransformScratch& scratch) {
  constexpr double kDegrees = 180.0 / 3.14159265358979323846;
  const bool geometric = op == AugOp::kShearX || op == AugOp::kShearY || op == AugOp::kTranslateX ||
                         op == AugOp::kTranslateY || op == AugOp::kRotate;
  const WarpFill fill = geometric ? warp_fill_make(geometry.fill, image.channels) : WarpFill{};
  switch (op) {
    case AugOp::kIdentity: return;
    case AugOp::kShearX:
      return affine_warp_u8(image, 0.0, {0, 0}, 1.0, {std::atan(magnitude) * kDegrees, 0.0}, geometry.interpolation,
                            fill, std::array<double, 2>{0, 0}, scratch);
    case AugOp::kShearY:
      return affine_warp_u8(image, 0.0, {0, 0}, 1.0, {0.0, std::atan(magnitude) * kDegrees}, geometry.interpolation,
                            fill, std::array<double, 2>{0, 0}, scratch);
    case AugOp::kTranslateX:
      return affine_warp_u8(image, 0.0, {std::trunc(magnitude), 0}, 1.0, {0, 0}, geometry.interpolation, fill,
                            std::nullopt, scratch);
    case AugOp::kTranslateY:
      return affine_warp_u8(image, 0.0, {0, std::trunc(magnitude)}, 1.0, {0, 0}, geometry.interpolation, fill,
                            std::nullopt, scratch);
    case AugOp::kRotate:
      return rotate_warp_u8(image, magnitude, geometry.interpolation, false, std::nullopt, fill, scratch);
    case AugOp::kBrightness: return adjust_brightness_u8(image, 1.0 + magnitude);
    case AugOp::kColor: return adjust_saturation_u8(image, 1.0 + magnitude);
    case AugOp::kContrast: return adjust_contrast_u8(image, 1.0 + magnitude);
    case AugOp::kSharpness: return adjust_sharpness_u8(image, 1.0 + magnitude, scratch);
    case AugOp::kPosterize: return posterize_u8(image, static_cast<int64_t>(magnitude));
    case AugOp::kSolarize: return solarize_u8(image, 255.0 * magnitude);
    case AugOp::kAutoContrast: return autocontrast_u8(image);
    case AugOp::kEqualize: return equalize_u8(image);
    case AugOp::kInvert: return invert_u8(image);
  }
}


} // namespace fastloop
