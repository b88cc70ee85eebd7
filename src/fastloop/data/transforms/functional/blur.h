// Gaussian blur of uint8 images as torchvision.transforms.v2.functional.gaussian_blur computes it: the
// float32 kernel softmax(-(linspace(-lim, lim, k) / sigma)^2), reflect padding of k // 2 pixels, the
// convolution in float32 and round-half-even back to uint8. Used by GaussianBlur.
#pragma once

#include "fastloop/data/transforms/image_u8.h"

#include <cstdint>
#include <vector>

namespace fastloop {

/// torchvision's _get_gaussian_kernel1d(kernel_size, sigma) in float32, into `weights` (kernel_size values).
void gaussian_kernel1d(int64_t kernel_size, double sigma, std::vector<float>& weights);

/// v2.functional.gaussian_blur(image, [kernel_x, kernel_y], [sigma_x, sigma_y]) in place (odd, positive
/// kernel sizes; each side's padding kernel // 2 must be below the image's side, torch's reflect rule:
/// InputError otherwise). The intermediate rows live in scratch.floats.
void gaussian_blur_u8(ImageU8& image, int64_t kernel_x, int64_t kernel_y, double sigma_x, double sigma_y,
                      TransformScratch& scratch);

}  // namespace fastloop
