// Bounding-box kernels of torchvision.transforms.v2.functional (the BoundingBoxes kernels of flip, resize,
// crop, pad, affine, rotate, perspective, clamp and the sanitize mask), on XYXY boxes in double precision
// (torchvision computes in float32; the results agree to float32's rounding). Boxes are N * 4 numbers
// x1, y1, x2, y2 in pixels of a canvas of `height` x `width`; "clamped" is torchvision's soft/hard clamping,
// the same for axis-aligned boxes: x in [0, width], y in [0, height]; `clamp` false is clamping_mode None
// (SetClampingMode(None)), where torchvision's kernels leave the boxes unclamped.
#pragma once

#include "fastloop/data/transforms/targets.h"

#include <array>
#include <cstdint>
#include <vector>

namespace fastloop {

/// Each coordinate clamped to the canvas (ClampBoundingBoxes).
void boxes_clamp(std::vector<double>& boxes, int64_t height, int64_t width);

/// horizontal_flip / vertical_flip on a canvas `width` wide / `height` high.
void boxes_flip_horizontal(std::vector<double>& boxes, int64_t width);
void boxes_flip_vertical(std::vector<double>& boxes, int64_t height);

/// resize from in_h x in_w to out_h x out_w: x scaled by out_w / in_w, y by out_h / in_h (not clamped).
void boxes_resize(std::vector<double>& boxes, int64_t in_height, int64_t in_width, int64_t out_height, int64_t out_width);

/// crop(top, left, height, width): shifted by (-left, -top), then clamped to the height x width canvas.
/// Negative top / left are crop's implicit padding.
void boxes_crop(std::vector<double>& boxes, int64_t top, int64_t left, int64_t height, int64_t width, bool clamp = true);

/// pad(left, top, right, bottom) of a height x width canvas: shifted by (left, top), clamped to the padded canvas.
void boxes_pad(std::vector<double>& boxes, int64_t height, int64_t width, int64_t left, int64_t top, int64_t right,
               int64_t bottom, bool clamp = true);

/// torchvision's _get_inverse_affine_matrix(center, angle, translate, scale, shear, inverted=False): the forward
/// map of points, x' = m[0] x + m[1] y + m[2], y' = m[3] x + m[4] y + m[5], with `center` in pixels.
std::array<double, 6> forward_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear);

/// affine_bounding_boxes / rotate_bounding_boxes: each box's four corners mapped by `matrix` (forward), their
/// envelope, shifted by (-shift_x, -shift_y) (rotate's expand), clamped to the out_height x out_width canvas.
void boxes_affine(std::vector<double>& boxes, const std::array<double, 6>& matrix, double shift_x, double shift_y,
                  int64_t out_height, int64_t out_width, bool clamp = true);

/// perspective_bounding_boxes: corners through the inverse of the image's perspective `coefficients` (the
/// a..h that map output pixels to input ones), their envelope, clamped to the height x width canvas.
/// A singular map throws InputError with torchvision's message.
void boxes_perspective(std::vector<double>& boxes, const std::array<double, 8>& coefficients, int64_t height,
                       int64_t width, bool clamp = true);

/// _get_sanitize_bounding_boxes_mask: a box is kept when both sides are >= min_size, its area >= min_area and
/// every coordinate lies in [0, side of the canvas].
std::vector<bool> boxes_valid(const std::vector<double>& boxes, int64_t height, int64_t width, double min_size,
                              double min_area);

} // namespace fastloop
