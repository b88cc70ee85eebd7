// Perspective warps of uint8 images as torchvision.transforms.v2.functional.perspective computes them:
// the coefficients from four point pairs (_get_perspective_coeffs: least squares in double, rounded to
// float32), then warp.h's sampling. Used by RandomPerspective.
#pragma once

#include "fastloop/data/transforms/functional/warp.h"

#include <array>

namespace fastloop {

/// Four (x, y) corners: top-left, top-right, bottom-right, bottom-left (pixels).
using QuadPoints = std::array<std::array<double, 2>, 4>;

/// torchvision's _get_perspective_coeffs(startpoints, endpoints): (a, b, c, d, e, f, g, h) that map an output
/// pixel to its source, each rounded to float32 as torchvision returns them.
std::array<double, 8> perspective_coefficients(const QuadPoints& startpoints, const QuadPoints& endpoints);

/// v2.functional.perspective(image, startpoints=None, endpoints=None, interpolation, fill, coefficients).
void perspective_u8(ImageU8& image, const std::array<double, 8>& coefficients, Interpolation interpolation,
                    const WarpFill& fill, TransformScratch& scratch);

}  // namespace fastloop
