// Separable Gaussian blur in float32: a horizontal pass over each row padded by reflection (the padded row and
// the pass's results in the worker's scratch floats), then a vertical pass that weights whole rows at a time,
// both loops over contiguous floats that the compiler vectorises. torchvision convolves with the 2-D kernel
// (the outer product of the same 1-D kernels) in one pass, so sums differ in the last float bits: results
// equal to torch's or 1 level apart where a sum lies at a rounding tie (tests/python/test_transforms_geometry.py).
#include "fastloop/data/transforms/functional/blur.h"

#include "fastloop/core/errors.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace fastloop {
namespace {

// torch.linspace(-lim, lim, k) in float32 (the first half counted from the start, the second from the end),
// divided by sigma, squared, negated, softmax'd.
void blur_kernel_into(int64_t kernel_size, double sigma, float* w) {
  const double lim = static_cast<double>(kernel_size - 1) / (2.0 * std::sqrt(2.0));
  const float start = static_cast<float>(-lim), end = static_cast<float>(lim);
  const float step = kernel_size > 1 ? (end - start) / static_cast<float>(kernel_size - 1) : 0.f;
  const int64_t halfway = kernel_size / 2;
  const float s = static_cast<float>(sigma);
  float top = -INFINITY;
  for (int64_t i = 0; i < kernel_size; ++i) {
    const float x =
        i < halfway ? start + step * static_cast<float>(i) : end - step * static_cast<float>(kernel_size - i - 1);
    const float q = x / s;
    w[i] = -(q * q);
    top = std::max(top, w[i]);
  }
  float sum = 0.f;
  for (int64_t i = 0; i < kernel_size; ++i) {
    w[i] = std::exp(w[i] - top);
    sum += w[i];
  }
  const float inverse = 1.f / sum;
  for (int64_t i = 0; i < kernel_size; ++i) w[i] *= inverse;
}

// Round half to even of a value clamped to [0, 255]: adding 1.5 * 2^23 leaves no fraction bits, so the FPU's
// default rounding (ties to even, as torch.round) does it; a loop of these vectorises, std::nearbyint does not.
inline float blur_round(float v) {
  v = std::min(std::max(v, 0.f), 255.f);
  return (v + 12582912.f) - 12582912.f;
}

inline int64_t blur_reflect(int64_t i, int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); }

void blur_check(int64_t kernel, int64_t side, const char* which) {
  if (kernel < 1 || kernel % 2 == 0) {
    throw InputError("gaussian_blur: kernel_size should have odd and positive integers. Got " + std::to_string(kernel));
  }
  if (kernel / 2 >= side) {
    throw InputError(std::string("gaussian_blur: the reflect padding of ") + std::to_string(kernel / 2) +
                     " pixels for kernel size " + std::to_string(kernel) + " is not less than the image's " + which +
                     " of " + std::to_string(side) + " pixels (torch's reflect rule); use a smaller kernel_size");
  }
}

}  // namespace

void gaussian_kernel1d(int64_t kernel_size, double sigma, std::vector<float>& weights) {
  weights.resize(static_cast<size_t>(kernel_size));
  blur_kernel_into(kernel_size, sigma, weights.data());
}

void gaussian_blur_u8(ImageU8& image, int64_t kernel_x, int64_t kernel_y, double sigma_x, double sigma_y,
                      TransformScratch& scratch) {
  blur_check(kernel_x, image.width, "width");
  blur_check(kernel_y, image.height, "height");
  if (!(sigma_x > 0.0 && sigma_y > 0.0)) {
    throw InputError("gaussian_blur: sigma should have positive values. Got [" + std::to_string(sigma_x) + ", " +
                     std::to_string(sigma_y) + "]");
  }
  const int64_t H = image.height, W = image.width, C = image.channels, row = W * C;
  const int64_t rx = kernel_x / 2, ry = kernel_y / 2;
  // scratch.floats: [x weights][y weights][one padded row][H rows of the horizontal pass][one sum row]
  const int64_t padded = (W + 2 * rx) * C;
  const auto need = static_cast<size_t>(kernel_x + kernel_y + padded + (H + 1) * row);
  if (scratch.floats.size() < need) scratch.floats.resize(need);
  float* wx = scratch.floats.data();
  float* wy = wx + kernel_x;
  float* pad = wy + kernel_y;
  float* pass = pad + padded;
  float* sum = pass + H * row;
  blur_kernel_into(kernel_x, sigma_x, wx);
  blur_kernel_into(kernel_y, sigma_y, wy);
  for (int64_t y = 0; y < H; ++y) {
    const uint8_t* in = image.row(y);
    for (int64_t x = -rx; x < W + rx; ++x) {
      const uint8_t* p = in + blur_reflect(x, W) * C;
      for (int64_t c = 0; c < C; ++c) pad[(x + rx) * C + c] = static_cast<float>(p[c]);
    }
    float* out = pass + y * row;
    for (int64_t i = 0; i < row; ++i) out[i] = wx[0] * pad[i];
    for (int64_t k = 1; k < kernel_x; ++k) {
      const float w = wx[k];
      const float* p = pad + k * C;
      for (int64_t i = 0; i < row; ++i) out[i] += w * p[i];
    }
  }
  for (int64_t y = 0; y < H; ++y) {
    const float* first = pass + blur_reflect(y - ry, H) * row;
    for (int64_t i = 0; i < row; ++i) sum[i] = wy[0] * first[i];
    for (int64_t k = 1; k < kernel_y; ++k) {
      const float w = wy[k];
      const float* p = pass + blur_reflect(y + k - ry, H) * row;
      for (int64_t i = 0; i < row; ++i) sum[i] += w * p[i];
    }
    uint8_t* out = image.row(y);
    for (int64_t i = 0; i < row; ++i) out[i] = static_cast<uint8_t>(blur_round(sum[i]));
  }
}

}  // namespace fastloop
