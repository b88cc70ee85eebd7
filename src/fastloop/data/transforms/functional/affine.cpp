// affine and rotate of uint8 images as torchvision.transforms.v2.functional computes them: the inverse matrix
// of _get_inverse_affine_matrix (double, as Python), rotate's fast paths (a copy for 0 degrees, a transpose
// for 90/180/270 about the centre, as torch.rot90), expand's canvas from _compute_affine_output_size (in
// float32, as its tensors), then warp.h's sampling.
#include "fastloop/data/transforms/functional/affine.h"

#include "fastloop/data/transforms/functional/warp.h"

#include <cmath>
#include <utility>

namespace fastloop {
namespace {

constexpr double kAffinePi = 3.14159265358979323846;

double affine_radians(double degrees) { return degrees * (kAffinePi / 180.0); }  // as math.radians: x * degToRad

// Python's float a % b (the result takes b's sign).
double affine_python_mod(double a, double b) {
  double mod = std::fmod(a, b);
  if (mod != 0.0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

// torch.rot90(image, k, dims=(-2, -1)) of an HWC image into `out`: k = 1 turns it anticlockwise.
void rot90_u8(const ImageU8& image, int k, ImageU8& out) {
  const int64_t H = image.height, W = image.width, C = image.channels;
  if (k == 2) {
    out.reshape(H, W, C);
    for (int64_t y = 0; y < H; ++y) {
      const uint8_t* in = image.row(H - 1 - y);
      uint8_t* o = out.row(y);
      for (int64_t x = 0; x < W; ++x) {
        for (int64_t c = 0; c < C; ++c) o[x * C + c] = in[(W - 1 - x) * C + c];
      }
    }
    return;
  }
  out.reshape(W, H, C);  // k = 1: out[i][j] = in[j][W - 1 - i]; k = 3: out[i][j] = in[H - 1 - j][i]
  for (int64_t i = 0; i < W; ++i) {
    uint8_t* o = out.row(i);
    const int64_t column = k == 1 ? W - 1 - i : i;
    for (int64_t j = 0; j < H; ++j) {
      const uint8_t* p = image.row(k == 1 ? j : H - 1 - j) + column * C;
      for (int64_t c = 0; c < C; ++c) o[j * C + c] = p[c];
    }
  }
}

}  // namespace

std::pair<int64_t, int64_t> affine_expanded_size(const std::array<double, 6>& matrix, int64_t w, int64_t h) {
  const float half_w = static_cast<float>(0.5 * static_cast<double>(w));
  const float half_h = static_cast<float>(0.5 * static_cast<double>(h));
  const float pts[4][2] = {{-half_w, -half_h}, {-half_w, half_h}, {half_w, half_h}, {half_w, -half_h}};
  float theta[6];
  for (int k = 0; k < 6; ++k) theta[k] = static_cast<float>(matrix[static_cast<size_t>(k)]);
  float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  for (const auto& p : pts) {
    for (int r = 0; r < 2; ++r) {
      const float v = std::fma(p[1], theta[3 * r + 1], p[0] * theta[3 * r]) + theta[3 * r + 2];  // as warp.cpp's grid
      lo[r] = std::min(lo[r], v);
      hi[r] = std::max(hi[r], v);
    }
  }
  const float halfs[2] = {half_w, half_h};
  const float tol = 1e-4f, inv_tol = static_cast<float>(1.0 / 1e-4);
  int64_t size[2];
  for (int r = 0; r < 2; ++r) {
    const float cmax = std::ceil(std::trunc((hi[r] + halfs[r]) * inv_tol) * tol);
    const float cmin = std::floor(std::trunc((lo[r] + halfs[r]) * inv_tol) * tol);
    size[r] = static_cast<int64_t>(cmax - cmin);
  }
  return {size[0], size[1]};  // w, h
}


std::array<double, 6> inverse_affine_matrix(std::array<double, 2> center, double angle, std::array<double, 2> translate,
                                            double scale, std::array<double, 2> shear) {
  const double rot = affine_radians(angle), sx = affine_radians(shear[0]), sy = affine_radians(shear[1]);
  const double cx = center[0], cy = center[1], tx = translate[0], ty = translate[1];
  const double cos_sy = std::cos(sy), tan_sx = std::tan(sx), rot_minus_sy = rot - sy;
  const double cx_plus_tx = cx + tx, cy_plus_ty = cy + ty;
  const double a = std::cos(rot_minus_sy) / cos_sy;
  const double b = -(a * tan_sx + std::sin(rot));
  const double c = std::sin(rot_minus_sy) / cos_sy;
  const double d = std::cos(rot) - c * tan_sx;
  std::array<double, 6> m = {d / scale, -b / scale, 0.0, -c / scale, a / scale, 0.0};
  m[2] += cx - m[0] * cx_plus_tx - m[1] * cy_plus_ty;
  m[5] += cy - m[3] * cx_plus_tx - m[4] * cy_plus_ty;
  return m;
}

void affine_warp_u8(ImageU8& image, double angle, std::array<double, 2> translate, double scale,
                    std::array<double, 2> shear, Interpolation interpolation, const WarpFill& fill,
                    std::optional<std::array<double, 2>> center, TransformScratch& scratch) {
  warp_interpolation_check(interpolation);
  std::array<double, 2> center_f = {0.0, 0.0};
  if (center) {  // pixels from the top-left corner -> relative to the image centre
    center_f = {(*center)[0] - static_cast<double>(image.width) * 0.5,
                (*center)[1] - static_cast<double>(image.height) * 0.5};
  }
  const auto matrix = inverse_affine_matrix(center_f, angle, translate, scale, shear);
  warp_affine_u8(image, matrix, image.height, image.width, interpolation, fill, scratch);
}

void rotate_warp_u8(ImageU8& image, double angle, Interpolation interpolation, bool expand,
                    std::optional<std::array<double, 2>> center, const WarpFill& fill, TransformScratch& scratch) {
  angle = affine_python_mod(angle, 360.0);
  if (!center) {
    if (angle == 0.0) return;
    const bool square = image.width == image.height;
    const int k = angle == 180.0 ? 2 : (expand || square) ? (angle == 90.0 ? 1 : angle == 270.0 ? 3 : 0) : 0;
    if (k != 0) {
      rot90_u8(image, k, scratch.spare);
      std::swap(image, scratch.spare);
      return;
    }
  }
  warp_interpolation_check(interpolation);
  std::array<double, 2> center_f = {0.0, 0.0};
  if (center) {
    center_f = {(*center)[0] - static_cast<double>(image.width) * 0.5,
                (*center)[1] - static_cast<double>(image.height) * 0.5};
  }
  // rotate's angle runs the other way round from affine's.
  const auto matrix = inverse_affine_matrix(center_f, -angle, {0.0, 0.0}, 1.0, {0.0, 0.0});
  int64_t out_w = image.width, out_h = image.height;
  if (expand) std::tie(out_w, out_h) = affine_expanded_size(matrix, image.width, image.height);
  warp_affine_u8(image, matrix, out_h, out_w, interpolation, fill, scratch);
}

void affine_u8(ImageU8& image, double angle, std::array<double, 2> translate, double scale, std::array<double, 2> shear,
               Interpolation interpolation, const std::vector<double>& fill,
               std::optional<std::array<double, 2>> center, TransformScratch& scratch) {
  affine_warp_u8(image, angle, translate, scale, shear, interpolation, warp_fill_make(fill, image.channels), center,
                 scratch);
}

void rotate_u8(ImageU8& image, double angle, Interpolation interpolation, bool expand,
               std::optional<std::array<double, 2>> center, const std::vector<double>& fill,
               TransformScratch& scratch) {
  rotate_warp_u8(image, angle, interpolation, expand, center, warp_fill_make(fill, image.channels), scratch);
}

}  // namespace fastloop
