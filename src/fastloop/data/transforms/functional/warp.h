// The sampling step that torchvision.transforms.v2's affine, rotate and perspective share on uint8 images
// (_apply_grid_transform): torch.nn.functional.grid_sample(mode nearest or bilinear, padding zeros,
// align_corners=False) of the image as float32, with a ones channel whose sampled value (the mask) blends
// in `fill`, then round-half-even to uint8. Shared by affine.cpp and perspective.cpp.
#pragma once

#include "fastloop/data/transforms/functional/warp_fill.h"
#include "fastloop/data/transforms/image_u8.h"
#include "fastloop/data/transforms/transform.h"

#include <array>
#include <optional>
#include <vector>

namespace fastloop {


/// `fill` (nullopt: torchvision's None; 1 value; or one per channel) for a `channels`-channel image. A
/// length that is neither 1 nor `channels` throws InputError with torchvision's message.
WarpFill warp_fill_make(const std::optional<std::vector<double>>& fill, int64_t channels);

/// Nearest or bilinear: what torchvision's tensor warps accept ("Interpolation mode 'bicubic' is unsupported
/// with Tensor input" otherwise, InputError).
void warp_interpolation_check(Interpolation interpolation);

/// The image warped by the inverse affine `matrix` (torchvision's 6 numbers from _get_inverse_affine_matrix,
/// centre-origin pixels) into an out_height x out_width image in `scratch.spare`, then swapped into `image`.
/// As _affine_grid + _apply_grid_transform, in float32 as torch computes them.
void warp_affine_u8(ImageU8& image, const std::array<double, 6>& matrix, int64_t out_height, int64_t out_width,
                    Interpolation interpolation, const WarpFill& fill, TransformScratch& scratch);

/// The same with the perspective coefficients (a..h of torchvision's _perspective_grid), same size.
void warp_perspective_u8(ImageU8& image, const std::array<double, 8>& coefficients, Interpolation interpolation,
                         const WarpFill& fill, TransformScratch& scratch);

/// torchvision's _create_identity_grid along one side of `size` pixels: torch.linspace((1 - size) / size,
/// (size - 1) / size, size) in float32 as ATen's linspace kernel computes it (from both ends, the halves meeting
/// in the middle), with the fused multiply-add its AVX2 and AVX-512 builds contract the product into.
void identity_grid_f32(int64_t size, float* out);

/// v2.functional.elastic's image kernel: the identity grid plus `displacement` (torchvision's [1, H, W, 2] in
/// float32, x then y per pixel) sampled by grid_sample as the other warps; the image keeps its size.
void warp_elastic_u8(ImageU8& image, const float* displacement, const float* grid_x, const float* grid_y,
                     Interpolation interpolation, const WarpFill& fill, TransformScratch& scratch);

/// affine_u8 and rotate_u8 (affine.h) with torchvision's fill=None expressible.
void affine_warp_u8(ImageU8& image, double angle, std::array<double, 2> translate, double scale,
                    std::array<double, 2> shear, Interpolation interpolation, const WarpFill& fill,
                    std::optional<std::array<double, 2>> center, TransformScratch& scratch);
void rotate_warp_u8(ImageU8& image, double angle, Interpolation interpolation, bool expand,
                    std::optional<std::array<double, 2>> center, const WarpFill& fill, TransformScratch& scratch);

/// torchvision's _get_inverse_affine_matrix (center relative to the image centre, angles in degrees).
std::array<double, 6> inverse_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear);

}  // namespace fastloop
