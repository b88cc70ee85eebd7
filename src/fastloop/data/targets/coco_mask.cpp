// Ported by hand from pycocotools' common/maskApi.c (rleFrPoly, rleMerge, rleFrString, rleDecode), Microsoft COCO
// Toolbox version 2.0, Copyright (c) 2014, Piotr Dollar and Tsung-Yi Lin, Simplified BSD License (BSD-2-Clause):
// no Debian package ships that C code (only the Python wheel holds it, compiled), and the masks must equal
// pycocotools' byte for byte, so the arithmetic below is maskApi.c's own: the same doubles, the same int casts
// (truncation toward zero) and the same tests. Two changes that keep the result: rleFrPoly's arrays of
// upsampled points become one pass that keeps the previous point, and its sort + run-length encoding + merge +
// decode become "a pixel is set when an odd number of boundary positions lie at or before it" (the meaning of
// its runs), filled straight into the row-major mask. tests/python/test_coco.py compares with pycocotools.
#include "fastloop/data/targets/coco_mask.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace fastloop {
namespace {

constexpr double kScale = 5;  // rleFrPoly's upsampling of the polygon

// maskApi.c's (int) cast of a double as x86-64 performs it (cvttsd2si): toward zero, and INT_MIN for NaN or a value
// out of range, which C leaves undefined. It happens: an edge between two equal points has slope 0 / 0 = NaN, and
// pycocotools (on x86-64) then places that point at y = INT_MIN, clamped to row 0 when it becomes a boundary point.
int to_int(double v) {
  if (!(v >= -2147483648.0 && v < 2147483648.0)) return std::numeric_limits<int>::min();
  return static_cast<int>(v);
}

// The column-major positions [begin, end) set to 1 in the row-major mask.
void fill_run(uint8_t* mask, int64_t height, int64_t width, int64_t begin, int64_t end) {
  int64_t x = begin / height, y = begin % height;
  for (int64_t p = begin; p < end; ++p) {
    mask[y * width + x] = 1;
    if (++y == height) y = 0, ++x;
  }
}

// rleFrPoly's second loop for one pair of consecutive upsampled points (u, v) after (pu, pv): a point on the
// boundary where the upsampled x moves, downsampled, when it falls on a pixel column inside the canvas.
void boundary_step(int u, int v, int pu, int pv, int64_t height, int64_t width, std::vector<uint32_t>& out) {
  if (u == pu) return;
  double xd = static_cast<double>(u < pu ? u : u - 1);  // u - 1: INT_MIN - 1 cannot occur, u > pu there
  xd = (xd + .5) / kScale - .5;
  if (std::floor(xd) != xd || xd < 0 || xd > static_cast<double>(width - 1)) return;
  double yd = static_cast<double>(v < pv ? v : pv);
  yd = (yd + .5) / kScale - .5;
  if (yd < 0) yd = 0;
  else if (yd > static_cast<double>(height)) yd = static_cast<double>(height);
  yd = std::ceil(yd);
  out.push_back(static_cast<uint32_t>(to_int(xd) * static_cast<int>(height) + to_int(yd)));
}

} // namespace

void coco_polygon_boundary(const double* xy, int64_t points, int64_t height, int64_t width, std::vector<uint32_t>& out) {
  out.clear();
  if (points <= 0) return;  // rleFrPoly finds no point: an empty mask
  auto x_at = [&](int64_t j) { return to_int(kScale * xy[(j % points) * 2 + 0] + .5); };
  auto y_at = [&](int64_t j) { return to_int(kScale * xy[(j % points) * 2 + 1] + .5); };
  bool first = true;
  int pu = 0, pv = 0;
  auto visit = [&](int u, int v) {
    if (!first) boundary_step(u, v, pu, pv, height, width, out);
    first = false, pu = u, pv = v;
  };
  for (int64_t j = 0; j < points; ++j) {  // each edge upsampled, its end points included (maskApi.c's first loop)
    int xs = x_at(j), xe = x_at(j + 1), ys = y_at(j), ye = y_at(j + 1);
    const int dx = std::abs(xe - xs), dy = std::abs(ys - ye);
    const bool flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    if (flip) std::swap(xs, xe), std::swap(ys, ye);
    const double s = dx >= dy ? static_cast<double>(ye - ys) / dx : static_cast<double>(xe - xs) / dy;
    if (dx >= dy) {
      for (int d = 0; d <= dx; ++d) {
        const int t = flip ? dx - d : d;
        visit(t + xs, to_int(ys + s * t + .5));
      }
    } else {
      for (int d = 0; d <= dy; ++d) {
        const int t = flip ? dy - d : d;
        visit(to_int(xs + s * t + .5), t + ys);
      }
    }
  }
}

void coco_polygon_fill(const double* xy, int64_t points, int64_t height, int64_t width, uint8_t* mask,
                       std::vector<uint32_t>& scratch) {
  coco_polygon_boundary(xy, points, height, width, scratch);
  std::sort(scratch.begin(), scratch.end());
  const int64_t area = height * width;
  bool inside = false;
  for (size_t i = 0; i < scratch.size(); ++i) {
    inside = !inside;
    const int64_t begin = scratch[i];
    const int64_t end = i + 1 < scratch.size() ? static_cast<int64_t>(scratch[i + 1]) : area;
    if (inside && begin < area) fill_run(mask, height, width, begin, std::min(end, area));
  }
}

void coco_rle_fill(const uint32_t* counts, int64_t size, int64_t height, int64_t width, uint8_t* mask) {
  int64_t at = 0;
  for (int64_t j = 0; j < size; ++j) {
    const int64_t end = at + counts[j];
    if (j % 2 == 1) fill_run(mask, height, width, at, end);
    at = end;
  }
}

std::string coco_rle_check(const uint32_t* counts, int64_t size, int64_t height, int64_t width) {
  int64_t sum = 0;
  for (int64_t j = 0; j < size; ++j) sum += counts[j];
  if (sum == height * width) return {};
  return "counts add up to " + std::to_string(sum) + " pixels, not size " + std::to_string(height) + " x " +
         std::to_string(width) + " = " + std::to_string(height * width);
}

std::string coco_rle_from_string(std::string_view text, std::vector<uint32_t>& counts) {
  const size_t first = counts.size();
  size_t p = 0;
  while (p < text.size()) {
    int64_t x = 0;
    int k = 0;
    bool more = true;
    while (more) {
      if (p == text.size()) return "counts string ends inside a number (character " + std::to_string(p) + ")";
      if (k == 6) return "counts string has a number longer than 6 characters at character " + std::to_string(p);
      const int c = static_cast<unsigned char>(text[p]) - 48;
      if (c < 0 || c > 63)
        return "counts string has '" + std::string(1, text[p]) + "' at character " + std::to_string(p) +
               " (COCO's compressed RLE uses '0' to 'o')";
      x |= static_cast<int64_t>(c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      ++p, ++k;
      if (!more && (c & 0x10)) x |= static_cast<int64_t>(-1) * (int64_t{1} << (5 * k));
    }
    const size_t m = counts.size() - first;
    if (m > 2) x += counts[counts.size() - 2];
    if (x < 0 || x > UINT32_MAX)
      return "counts string's run " + std::to_string(m) + " is " + std::to_string(x) + ", outside 0 to 2^32 - 1";
    counts.push_back(static_cast<uint32_t>(x));
  }
  return {};
}

} // namespace fastloop
