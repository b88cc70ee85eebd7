#include "fastloop/data/transforms/functional/boxes.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fastloop {

void boxes_clamp(std::vector<double>& boxes, int64_t height, int64_t width) {
  for (size_t i = 0; i < boxes.size(); ++i)
    boxes[i] = std::clamp(boxes[i], 0.0, static_cast<double>(i % 2 == 0 ? width : height));
}

void boxes_flip_horizontal(std::vector<double>& boxes, int64_t width) {
  for (size_t i = 0; i + 3 < boxes.size(); i += 4) {
    const double x1 = boxes[i], x2 = boxes[i + 2];
    boxes[i] = static_cast<double>(width) - x2;
    boxes[i + 2] = static_cast<double>(width) - x1;
  }
}

void boxes_flip_vertical(std::vector<double>& boxes, int64_t height) {
  for (size_t i = 0; i + 3 < boxes.size(); i += 4) {
    const double y1 = boxes[i + 1], y2 = boxes[i + 3];
    boxes[i + 1] = static_cast<double>(height) - y2;
    boxes[i + 3] = static_cast<double>(height) - y1;
  }
}

void boxes_resize(std::vector<double>& boxes, int64_t in_height, int64_t in_width, int64_t out_height, int64_t out_width) {
  if (in_height == out_height && in_width == out_width) return;  // torchvision returns them untouched
  const double sx = static_cast<double>(out_width) / static_cast<double>(in_width);
  const double sy = static_cast<double>(out_height) / static_cast<double>(in_height);
  for (size_t i = 0; i < boxes.size(); ++i) boxes[i] *= i % 2 == 0 ? sx : sy;
}

void boxes_crop(std::vector<double>& boxes, int64_t top, int64_t left, int64_t height, int64_t width, bool clamp) {
  for (size_t i = 0; i < boxes.size(); ++i) boxes[i] -= static_cast<double>(i % 2 == 0 ? left : top);
  if (clamp) boxes_clamp(boxes, height, width);
}

void boxes_pad(std::vector<double>& boxes, int64_t height, int64_t width, int64_t left, int64_t top, int64_t right,
               int64_t bottom, bool clamp) {
  for (size_t i = 0; i < boxes.size(); ++i) boxes[i] += static_cast<double>(i % 2 == 0 ? left : top);
  if (clamp) boxes_clamp(boxes, height + top + bottom, width + left + right);
}

std::array<double, 6> forward_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear) {
  const double pi = 3.14159265358979323846;
  const double rot = angle * pi / 180.0, sx = shear[0] * pi / 180.0, sy = shear[1] * pi / 180.0;
  const double a = std::cos(rot - sy) / std::cos(sy);
  const double b = -std::cos(rot - sy) * std::tan(sx) / std::cos(sy) - std::sin(rot);
  const double c = std::sin(rot - sy) / std::cos(sy);
  const double d = -std::sin(rot - sy) * std::tan(sx) / std::cos(sy) + std::cos(rot);
  std::array<double, 6> m = {a * scale, b * scale, 0.0, c * scale, d * scale, 0.0};
  const double cx = center[0], cy = center[1];
  m[2] += m[0] * -cx + m[1] * -cy + cx + translate[0];
  m[5] += m[3] * -cx + m[4] * -cy + cy + translate[1];
  return m;
}

namespace {

// Each box's corners through `map` (a point -> point function), replaced by their envelope.
template <typename Map>
void boxes_envelope(std::vector<double>& boxes, Map map) {
  for (size_t i = 0; i + 3 < boxes.size(); i += 4) {
    const double xs[4] = {boxes[i], boxes[i + 2], boxes[i + 2], boxes[i]};
    const double ys[4] = {boxes[i + 1], boxes[i + 1], boxes[i + 3], boxes[i + 3]};
    double lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
    for (int k = 0; k < 4; ++k) {
      const auto [x, y] = map(xs[k], ys[k]);
      lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
      lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
    }
    boxes[i] = lo_x, boxes[i + 1] = lo_y, boxes[i + 2] = hi_x, boxes[i + 3] = hi_y;
  }
}

}  // namespace

void boxes_affine(std::vector<double>& boxes, const std::array<double, 6>& m, double shift_x, double shift_y,
                  int64_t out_height, int64_t out_width, bool clamp) {
  boxes_envelope(boxes, [&](double x, double y) {
    return std::pair<double, double>{m[0] * x + m[1] * y + m[2] - shift_x, m[3] * x + m[4] * y + m[5] - shift_y};
  });
  if (clamp) boxes_clamp(boxes, out_height, out_width);
}

void boxes_perspective(std::vector<double>& boxes, const std::array<double, 8>& k, int64_t height, int64_t width,
                       bool clamp) {
  if (boxes.empty()) return;
  const double denom = k[0] * k[4] - k[1] * k[3];
  if (denom == 0.0) {
    std::ostringstream message;
    message << "Provided perspective_coeffs can not be inverted to transform bounding boxes. Denominator is zero, "
               "denom="
            << denom;
    throw InputError(message.str());
  }
  const double inv[8] = {(k[4] - k[5] * k[7]) / denom,         (-k[1] + k[2] * k[7]) / denom,
                         (k[1] * k[5] - k[2] * k[4]) / denom,  (-k[3] + k[5] * k[6]) / denom,
                         (k[0] - k[2] * k[6]) / denom,         (-k[0] * k[5] + k[2] * k[3]) / denom,
                         (-k[4] * k[6] + k[3] * k[7]) / denom, (-k[0] * k[7] + k[1] * k[6]) / denom};
  boxes_envelope(boxes, [&](double x, double y) {
    const double w = inv[6] * x + inv[7] * y + 1.0;
    return std::pair<double, double>{(inv[0] * x + inv[1] * y + inv[2]) / w, (inv[3] * x + inv[4] * y + inv[5]) / w};
  });
  if (clamp) boxes_clamp(boxes, height, width);
}

std::vector<bool> boxes_valid(const std::vector<double>& boxes, int64_t height, int64_t width, double min_size,
                              double min_area) {
  std::vector<bool> valid(boxes.size() / 4);
  const double w_max = static_cast<double>(width), h_max = static_cast<double>(height);
  for (size_t i = 0; i < valid.size(); ++i) {
    const double x1 = boxes[i * 4], y1 = boxes[i * 4 + 1], x2 = boxes[i * 4 + 2], y2 = boxes[i * 4 + 3];
    const double w = x2 - x1, h = y2 - y1;
    valid[i] = w >= min_size && h >= min_size && x1 >= 0 && y1 >= 0 && x2 >= 0 && y2 >= 0 && w * h >= min_area &&
               x1 <= w_max && x2 <= w_max && y1 <= h_max && y2 <= h_max;
  }
  return valid;
}

} // namespace fastloop
