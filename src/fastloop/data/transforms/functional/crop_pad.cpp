// Pad-then-crop in one pass over the output: each output column's source column is computed once (into the
// worker's scratch ints), each row's on the fly; the part of a row that lies inside the image is one memcpy,
// only the padded border goes pixel by pixel. Negative padding crops first and pads the rest (torchvision's
// symmetric rule; the same bytes for constant and edge).
#include "fastloop/data/transforms/functional/crop_pad.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace fastloop {
namespace {

constexpr int64_t kPadFill = -1;   // the padding's fill
constexpr int64_t kCropZero = -2;  // outside the padded image: crop() fills 0

// The source index of padded coordinate `p`: `lo` pixels of padding before `size` source pixels, `hi` after.
int64_t pad_source(int64_t p, int64_t lo, int64_t size, int64_t hi, PaddingMode mode) {
  if (p < 0 || p >= lo + size + hi) return kCropZero;
  const int64_t i = p - lo;
  if (i >= 0 && i < size) return i;
  switch (mode) {
    case PaddingMode::kConstant: return kPadFill;
    case PaddingMode::kEdge: return i < 0 ? 0 : size - 1;
    case PaddingMode::kReflect: return i < 0 ? -i : 2 * (size - 1) - i;
    case PaddingMode::kSymmetric: return i < 0 ? -i - 1 : 2 * size - 1 - i;
  }
  return kPadFill;
}

void check_reflect_padding(PaddingMode mode, int64_t lo, int64_t hi, int64_t size, const char* side) {
  if (mode == PaddingMode::kReflect && (lo >= size || hi >= size)) {
    throw InputError("pad: reflect padding of (" + std::to_string(lo) + ", " + std::to_string(hi) + ") pixels on the " +
                     side + " is not less than the image's " + std::to_string(size) +
                     " pixels (torch's reflect rule); use a smaller padding or padding_mode='edge'");
  }
  if (mode == PaddingMode::kSymmetric && (lo > size || hi > size)) {
    throw InputError("pad: symmetric padding of (" + std::to_string(lo) + ", " + std::to_string(hi) +
                     ") pixels on the " + side + " exceeds the image's " + std::to_string(size) +
                     " pixels; use a smaller padding or padding_mode='edge'");
  }
}

}  // namespace

PaddingMode padding_mode_parse(const std::string& name) {
  if (name == "constant") return PaddingMode::kConstant;
  if (name == "edge") return PaddingMode::kEdge;
  if (name == "reflect") return PaddingMode::kReflect;
  if (name == "symmetric") return PaddingMode::kSymmetric;
  throw InputError("Padding mode should be either constant, edge, reflect or symmetric");
}

const char* padding_mode_name(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::kConstant: return "constant";
    case PaddingMode::kEdge: return "edge";
    case PaddingMode::kReflect: return "reflect";
    case PaddingMode::kSymmetric: return "symmetric";
  }
  return "constant";
}

void pad_fill_bytes(const std::vector<double>& fill, int64_t channels, uint8_t out[4]) {
  if (fill.size() > 1 && static_cast<int64_t>(fill.size()) != channels) {
    throw InputError("pad: fill has " + std::to_string(fill.size()) + " values for an image of " +
                     std::to_string(channels) + " channels; give one value or one per channel");
  }
  for (int64_t c = 0; c < 4; ++c) {
    const double v = fill.empty() ? 0.0 : fill[fill.size() == 1 ? 0 : static_cast<size_t>(std::min(c, channels - 1))];
    out[c] = static_cast<uint8_t>(std::clamp(std::trunc(v), 0.0, 255.0));
  }
}

void pad_crop_u8(const ImageU8& image, const Padding& padding, PaddingMode mode, const uint8_t fill[4], int64_t top,
                 int64_t left, int64_t height, int64_t width, ImageU8& out, TransformScratch& scratch) {
  // Negative padding crops the source first.
  const int64_t r0 = std::max<int64_t>(0, -padding.top), r1 = image.height - std::max<int64_t>(0, -padding.bottom);
  const int64_t c0 = std::max<int64_t>(0, -padding.left), c1 = image.width - std::max<int64_t>(0, -padding.right);
  const int64_t src_h = r1 - r0, src_w = c1 - c0;
  if (src_h < 1 || src_w < 1 || height < 1 || width < 1) {
    throw InputError("pad/crop: padding (" + std::to_string(padding.left) + ", " + std::to_string(padding.top) + ", " +
                     std::to_string(padding.right) + ", " + std::to_string(padding.bottom) + ") and crop " +
                     std::to_string(height) + "x" + std::to_string(width) + " leave no pixels of a " +
                     std::to_string(image.height) + "x" + std::to_string(image.width) + " image");
  }
  const int64_t pl = std::max<int64_t>(0, padding.left), pr = std::max<int64_t>(0, padding.right);
  const int64_t pt = std::max<int64_t>(0, padding.top), pb = std::max<int64_t>(0, padding.bottom);
  check_reflect_padding(mode, pl, pr, src_w, "left/right");
  check_reflect_padding(mode, pt, pb, src_h, "top/bottom");
  const int64_t C = image.channels;
  out.reshape(height, width, C);
  scratch.ints.resize(std::max(scratch.ints.size(), static_cast<size_t>(width)));
  int32_t* cols = scratch.ints.data();
  for (int64_t x = 0; x < width; ++x) {
    const int64_t s = pad_source(left + x, pl, src_w, pr, mode);
    cols[x] = static_cast<int32_t>(s >= 0 ? s + c0 : s);
  }
  // Output columns [x_in, x_end) read the source's columns in order: one memcpy per row.
  const int64_t x_in = std::clamp(pl - left, int64_t{0}, width);
  const int64_t x_end = std::clamp(pl + src_w - left, x_in, width);
  const uint8_t zero[4] = {0, 0, 0, 0};
  // A row of the fill and one of zeros: rows and runs outside the source are copied from them whole (a zoom-out
  // pads most of a canvas many times the image's size).
  thread_local std::vector<uint8_t> fill_row, zero_row;
  const size_t row_bytes = static_cast<size_t>(width * C);
  fill_row.resize(std::max(fill_row.size(), row_bytes));
  zero_row.resize(std::max(zero_row.size(), row_bytes), 0);
  for (int64_t x = 0; x < width; ++x) std::memcpy(fill_row.data() + x * C, fill, static_cast<size_t>(C));
  const auto outside = [&](uint8_t* o, int64_t from, int64_t to, const uint8_t* in) {  // columns [from, to)
    bool constant = true;
    for (int64_t x = from; x < to && constant; ++x) constant = cols[x] < 0 && cols[x] == cols[from];
    if (constant && to > from) {
      const std::vector<uint8_t>& run = cols[from] == kPadFill ? fill_row : zero_row;
      std::memcpy(o + from * C, run.data(), static_cast<size_t>((to - from) * C));
      return;
    }
    for (int64_t x = from; x < to; ++x) {
      std::memcpy(o + x * C, cols[x] >= 0 ? in + cols[x] * C : (cols[x] == kPadFill ? fill : zero),
                  static_cast<size_t>(C));
    }
  };
  for (int64_t y = 0; y < height; ++y) {
    uint8_t* o = out.row(y);
    const int64_t s = pad_source(top + y, pt, src_h, pb, mode);
    if (s < 0) {
      std::memcpy(o, (s == kPadFill ? fill_row : zero_row).data(), row_bytes);
      continue;
    }
    const uint8_t* in = image.row(s + r0);
    outside(o, 0, x_in, in);
    if (x_end > x_in) std::memcpy(o + x_in * C, in + cols[x_in] * C, static_cast<size_t>((x_end - x_in) * C));
    outside(o, x_end, width, in);
  }
}

void pad_u8(const ImageU8& image, const Padding& padding, PaddingMode mode, const uint8_t fill[4], ImageU8& out,
            TransformScratch& scratch) {
  const int64_t height = image.height + padding.top + padding.bottom;
  const int64_t width = image.width + padding.left + padding.right;
  pad_crop_u8(image, padding, mode, fill, 0, 0, height, width, out, scratch);
}

void crop_u8(const ImageU8& image, int64_t top, int64_t left, int64_t height, int64_t width, ImageU8& out,
             TransformScratch& scratch) {
  const uint8_t zero[4] = {0, 0, 0, 0};
  pad_crop_u8(image, Padding{}, PaddingMode::kConstant, zero, top, left, height, width, out, scratch);
}

}  // namespace fastloop
