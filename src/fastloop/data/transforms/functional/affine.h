// Affine and perspective warps of uint8 images as torchvision.transforms.v2.functional.affine / rotate /
// perspective compute them on uint8 tensors (inverse affine matrix from _get_inverse_affine_matrix, sampling
// at pixel centres, nearest or bilinear, `fill` outside the image). Used by RandomRotation, RandomAffine,
// RandomPerspective and the geometric operations of AutoAugment / RandAugment / TrivialAugmentWide / AugMix.
#pragma once

#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/transform.h"

#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace fastloop {

/// v2.functional.affine(image, angle, translate, scale, shear, interpolation, fill, center) on uint8:
/// angle and shear in degrees, translate in pixels, center in pixels (nullopt: the image's centre);
/// `fill` has 1 value or one per channel (empty: 0). The result replaces `image` (same size).
void affine_u8(ImageU8& image, double angle, std::array<double, 2> translate, double scale, std::array<double, 2> shear,
               Interpolation interpolation, const std::vector<double>& fill, std::optional<std::array<double, 2>> center,
               TransformScratch& scratch);

/// v2.functional.rotate(image, angle, interpolation, expand, center, fill) on uint8 (expand grows the
/// canvas as torchvision does).
void rotate_u8(ImageU8& image, double angle, Interpolation interpolation, bool expand,
               std::optional<std::array<double, 2>> center, const std::vector<double>& fill, TransformScratch& scratch);

/// torchvision's _compute_affine_output_size(matrix, w, h): expand's canvas for the inverse affine `matrix`,
/// the turned corners in float32 truncated to 1e-4, ceil - floor; {width, height}.
std::pair<int64_t, int64_t> affine_expanded_size(const std::array<double, 6>& matrix, int64_t w, int64_t h);

} // namespace fastloop
