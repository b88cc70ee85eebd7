// Patch whitening, airbench94's first layer (Keller Jordan, airbench): conv filters made from the eigenvectors of
// the training images' kxk patch statistics, so that the layer's outputs start decorrelated with unit variance.
// Pure functions of tensors here; train/stem_whitening.h picks the images and freezes the layer.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace fastloop {

/// Whitening filters of the kernel x kernel patches of `images` (float [N, C, H, W], normalised as the model sees
/// them), zero-padded by kernel / 2 as a "same" conv pads them. As airbench: the patches' second-moment matrix
/// (uncentred, X^T X / patches, in float64), its top m = min(filters / 2, C * kernel^2) eigenvectors by eigenvalue
/// λ, each scaled by 1 / sqrt(λ + eps), then the same m negated. Returns float32 [2m, C, kernel, kernel]: row i
/// and row m + i are a +/- pair, and a conv with rows 0..m-1 gives outputs whose second moment over these patches
/// is diag(λ / (λ + eps)), about the identity. Fewer rows than `filters` when filters is odd or exceeds 2 C k^2.
at::Tensor patch_whitening_filters(const at::Tensor& images, int64_t kernel, int64_t filters, double eps);

} // namespace fastloop
