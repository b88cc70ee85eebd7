#include "fastloop/data/transforms/functional/keypoints.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fastloop {

void keypoints_flip_horizontal(std::vector<float>& points, int64_t width) {
  const float edge = static_cast<float>(width - 1);
  for (size_t i = 0; i + 1 < points.size(); i += 2) points[i] = -(points[i] - edge);  // sub_(w - 1).neg_()
}

void keypoints_flip_vertical(std::vector<float>& points, int64_t height) {
  const float edge = static_cast<float>(height - 1);
  for (size_t i = 1; i < points.size(); i += 2) points[i] = -(points[i] - edge);
}

void keypoints_resize(std::vector<float>& points, int64_t in_height, int64_t in_width, int64_t out_height,
                      int64_t out_width) {
  if (in_height == out_height && in_width == out_width) return;
  // torch.tensor([w_ratio, h_ratio]): Python's double ratios stored as float32
  const float sx = static_cast<float>(static_cast<double>(out_width) / static_cast<double>(in_width));
  const float sy = static_cast<float>(static_cast<double>(out_height) / static_cast<double>(in_height));
  for (size_t i = 0; i < points.size(); ++i) points[i] *= i % 2 == 0 ? sx : sy;
}

void keypoints_translate(std::vector<float>& points, int64_t dx, int64_t dy) {
  const float fx = static_cast<float>(dx), fy = static_cast<float>(dy);
  for (size_t i = 0; i < points.size(); ++i) points[i] += i % 2 == 0 ? fx : fy;
}

namespace {

// The matrix as torch.tensor(affine_vector, dtype=float32) holds it.
std::array<double, 6> float32_matrix(const std::array<double, 6>& m) {
  std::array<double, 6> out{};
  for (size_t k = 0; k < 6; ++k) out[k] = static_cast<float>(m[k]);
  return out;
}

}  // namespace

void keypoints_affine(std::vector<float>& points, const std::array<double, 6>& matrix, double shift_x, double shift_y) {
  const std::array<double, 6> m = float32_matrix(matrix);
  const float sx = static_cast<float>(shift_x), sy = static_cast<float>(shift_y);
  for (size_t i = 0; i + 1 < points.size(); i += 2) {
    const double x = points[i], y = points[i + 1];
    points[i] = static_cast<float>(m[0] * x + m[1] * y + m[2]) - sx;
    points[i + 1] = static_cast<float>(m[3] * x + m[4] * y + m[5]) - sy;
  }
}

std::array<double, 2> keypoints_expand_shift(const std::array<double, 6>& matrix, int64_t height, int64_t width) {
  const std::array<double, 6> m = float32_matrix(matrix);
  const double w = static_cast<float>(width), h = static_cast<float>(height);
  const double xs[4] = {0.0, 0.0, w, w}, ys[4] = {0.0, h, h, 0.0};
  float lo_x = INFINITY, lo_y = INFINITY;
  for (int k = 0; k < 4; ++k) {
    lo_x = std::min(lo_x, static_cast<float>(m[0] * xs[k] + m[1] * ys[k] + m[2]));
    lo_y = std::min(lo_y, static_cast<float>(m[3] * xs[k] + m[4] * ys[k] + m[5]));
  }
  return {lo_x, lo_y};
}

void keypoints_perspective(std::vector<float>& points, const std::array<double, 8>& k) {
  if (points.empty()) return;
  const double denom = k[0] * k[4] - k[1] * k[3];
  if (denom == 0.0) {
    std::ostringstream message;
    message << "Provided perspective_coeffs can not be inverted to transform keypoints. Denominator is zero, denom="
            << denom;
    throw InputError(message.str());
  }
  // _compute_perspective_thetas: the inverse map's coefficients, stored as float32
  const double inv[8] = {static_cast<float>((k[4] - k[5] * k[7]) / denom),
                         static_cast<float>((-k[1] + k[2] * k[7]) / denom),
                         static_cast<float>((k[1] * k[5] - k[2] * k[4]) / denom),
                         static_cast<float>((-k[3] + k[5] * k[6]) / denom),
                         static_cast<float>((k[0] - k[2] * k[6]) / denom),
                         static_cast<float>((-k[0] * k[5] + k[2] * k[3]) / denom),
                         static_cast<float>((-k[4] * k[6] + k[3] * k[7]) / denom),
                         static_cast<float>((-k[0] * k[7] + k[1] * k[6]) / denom)};
  for (size_t i = 0; i + 1 < points.size(); i += 2) {
    const double x = points[i], y = points[i + 1];
    const float w = static_cast<float>(inv[6] * x + inv[7] * y + 1.0);
    points[i] = static_cast<float>(inv[0] * x + inv[1] * y + inv[2]) / w;
    points[i + 1] = static_cast<float>(inv[3] * x + inv[4] * y + inv[5]) / w;
  }
}

void keypoints_clamp(std::vector<float>& points, int64_t height, int64_t width) {
  const float hi_x = static_cast<float>(width - 1), hi_y = static_cast<float>(height - 1);
  for (size_t i = 0; i + 1 < points.size(); i += 2) {
    points[i] = std::clamp(points[i], 0.0f, hi_x);
    points[i + 1] = std::clamp(points[i + 1], 0.0f, hi_y);
  }
}

namespace {

// Points per entry of the first dimension: valid.ndim > 1 (a tensor of 3 or more dimensions) groups them.
size_t keypoints_group(const std::vector<int64_t>& shape) {
  size_t group = 1;
  for (size_t d = 1; d < shape.size(); ++d) group *= static_cast<size_t>(shape[d]);
  return group;
}

}  // namespace

std::vector<bool> keypoints_valid(const std::vector<float>& points, const std::vector<int64_t>& shape, int64_t height,
                                  int64_t width) {
  const size_t group = keypoints_group(shape);
  const size_t count = shape.empty() ? 0 : static_cast<size_t>(shape[0]);
  const float w = static_cast<float>(width), h = static_cast<float>(height);
  std::vector<bool> valid(count, true);
  for (size_t g = 0; g < count; ++g) {
    for (size_t p = g * group; p < (g + 1) * group; ++p) {
      const float x = points[2 * p], y = points[2 * p + 1];
      if (!(x >= 0 && x < w && y >= 0 && y < h)) {
        valid[g] = false;
        break;
      }
    }
  }
  return valid;
}

void keypoints_keep(std::vector<float>& points, std::vector<int64_t>& shape, const std::vector<bool>& valid) {
  const size_t numbers = 2 * keypoints_group(shape);
  size_t out = 0;
  for (size_t g = 0; g < valid.size(); ++g) {
    if (!valid[g]) continue;
    if (out != g) std::copy_n(points.begin() + static_cast<std::ptrdiff_t>(g * numbers), numbers,
                              points.begin() + static_cast<std::ptrdiff_t>(out * numbers));
    ++out;
  }
  points.resize(out * numbers);
  if (!shape.empty()) shape[0] = static_cast<int64_t>(out);
}

} // namespace fastloop
