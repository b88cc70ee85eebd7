// The perspective coefficients solve an 8 x 8 linear system, A c = b, that torchvision solves with
// torch.linalg.lstsq(driver="gels") in double; the system is square and (for four distinct corners) regular,
// so Gaussian elimination with partial pivoting gives the same solution to double precision, and both are
// rounded to float32 before use.
#include "fastloop/data/transforms/functional/perspective.h"

#include "fastloop/core/errors.h"

#include <cmath>
#include <utility>

namespace fastloop {

std::array<double, 8> perspective_coefficients(const QuadPoints& startpoints, const QuadPoints& endpoints) {
  double a[8][9] = {};  // the augmented matrix [A | b]
  for (int i = 0; i < 4; ++i) {
    const double x1 = endpoints[static_cast<size_t>(i)][0], y1 = endpoints[static_cast<size_t>(i)][1];
    const double x2 = startpoints[static_cast<size_t>(i)][0], y2 = startpoints[static_cast<size_t>(i)][1];
    const double r0[9] = {x1, y1, 1, 0, 0, 0, -x2 * x1, -x2 * y1, x2};
    const double r1[9] = {0, 0, 0, x1, y1, 1, -y2 * x1, -y2 * y1, y2};
    for (int k = 0; k < 9; ++k) a[2 * i][k] = r0[k], a[2 * i + 1][k] = r1[k];
  }
  for (int col = 0; col < 8; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 8; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (a[pivot][col] == 0.0) {
      throw InputError(
          "perspective: the four end points are degenerate (three on a line or two equal); "
          "choose distinct corners");
    }
    if (pivot != col) {
      for (int k = 0; k < 9; ++k) std::swap(a[pivot][k], a[col][k]);
    }
    for (int r = col + 1; r < 8; ++r) {
      const double f = a[r][col] / a[col][col];
      for (int k = col; k < 9; ++k) a[r][k] -= f * a[col][k];
    }
  }
  std::array<double, 8> c{};
  for (int r = 7; r >= 0; --r) {
    double s = a[r][8];
    for (int k = r + 1; k < 8; ++k) s -= a[r][k] * c[static_cast<size_t>(k)];
    c[static_cast<size_t>(r)] = s / a[r][r];
  }
  for (double& v : c) v = static_cast<double>(static_cast<float>(v));
  return c;
}

void perspective_u8(ImageU8& image, const std::array<double, 8>& coefficients, Interpolation interpolation,
                    const WarpFill& fill, TransformScratch& scratch) {
  warp_perspective_u8(image, coefficients, interpolation, fill, scratch);
}

}  // namespace fastloop
