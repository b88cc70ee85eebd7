// KeyPoints kernels of torchvision.transforms.v2.functional (horizontal_flip_keypoints, resize_keypoints,
// crop_keypoints, pad_keypoints, affine_keypoints / rotate_keypoints, perspective_keypoints, clamp_keypoints and
// the sanitize mask) on x, y pairs in float32, as torchvision keeps and computes them: a flip, shift or resize is
// one float32 operation per coordinate (the same bits), a warp's matrix is rounded to float32 and each point
// rounded once (within an ulp of torchvision's float32 matmul). Unlike boxes, no geometric kernel clamps points.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace fastloop {

/// horizontal_flip_keypoints: x -> (width - 1) - x (a pixel's centre maps to its mirror's; boxes use width).
void keypoints_flip_horizontal(std::vector<float>& points, int64_t width);
/// vertical_flip_keypoints: y -> (height - 1) - y.
void keypoints_flip_vertical(std::vector<float>& points, int64_t height);

/// resize_keypoints from in_h x in_w to out_h x out_w: x times float32(out_w / in_w), y likewise; an unchanged
/// size leaves them as they are.
void keypoints_resize(std::vector<float>& points, int64_t in_height, int64_t in_width, int64_t out_height,
                      int64_t out_width);

/// pad_keypoints (dx = left, dy = top) and crop_keypoints (dx = -left, dy = -top): a float32 add per coordinate.
void keypoints_translate(std::vector<float>& points, int64_t dx, int64_t dy);

/// _affine_keypoints_with_expand: each point through the forward `matrix` (forward_affine_matrix, boxes.h), then
/// shifted by (-shift_x, -shift_y) (rotate's expand: the turned canvas's top-left corner).
void keypoints_affine(std::vector<float>& points, const std::array<double, 6>& matrix, double shift_x = 0.0,
                      double shift_y = 0.0);

/// The (shift_x, shift_y) of rotate's expand for keypoints: the least x and y of the canvas's corners through
/// `matrix` rounded to float32, as torchvision's torch.amin over its float32 corners.
std::array<double, 2> keypoints_expand_shift(const std::array<double, 6>& matrix, int64_t height, int64_t width);

/// perspective_keypoints: each point through the inverse of the image's perspective `coefficients`. A singular
/// map throws InputError with torchvision's message.
void keypoints_perspective(std::vector<float>& points, const std::array<double, 8>& coefficients);

/// clamp_keypoints: x in [0, width - 1], y in [0, height - 1].
void keypoints_clamp(std::vector<float>& points, int64_t height, int64_t width);

/// _get_sanitize_keypoints_mask for a KeyPoints tensor of shape `shape` + [2]: one entry per index of its first
/// dimension, true when every point of that group has 0 <= x < width and 0 <= y < height.
std::vector<bool> keypoints_valid(const std::vector<float>& points, const std::vector<int64_t>& shape, int64_t height,
                                  int64_t width);

/// Keeps the groups (first dimension of `shape`) whose `valid` entry is true; shape[0] becomes their count.
void keypoints_keep(std::vector<float>& points, std::vector<int64_t>& shape, const std::vector<bool>& valid);

} // namespace fastloop
