// patch_whitening_filters(): the patch second-moment matrix accumulated over image chunks (im2col), then its
// eigendecomposition (linalg_eigh, float64) turned into +/- pairs of whitening filters.
#include "fastloop/models/whiten.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace fastloop {

at::Tensor patch_whitening_filters(const at::Tensor& images, int64_t kernel, int64_t filters, double eps) {
  TORCH_CHECK(images.dim() == 4 && images.size(0) > 0 && images.is_floating_point(),
              "patch_whitening_filters: images must be float [N, C, H, W] with N > 0, got ", images.sizes(), " ",
              images.scalar_type());
  TORCH_CHECK(kernel >= 1 && kernel % 2 == 1, "patch_whitening_filters: kernel must be odd and >= 1, got ", kernel);
  TORCH_CHECK(filters >= 2, "patch_whitening_filters: filters must be >= 2 (one +/- pair), got ", filters);
  TORCH_CHECK(eps > 0, "patch_whitening_filters: eps must be > 0 (airbench: 5e-4), got ", eps);
  const int64_t channels = images.size(1), dim = channels * kernel * kernel;
  at::Tensor moment = at::zeros({dim, dim}, at::kDouble);
  int64_t patches = 0;
  // Chunks of images keep the unfolded patches (kernel^2 times the images' size, in float64) small.
  constexpr int64_t kChunk = 256;  // images
  for (int64_t begin = 0; begin < images.size(0); begin += kChunk) {
    const at::Tensor chunk = images.slice(0, begin, std::min(begin + kChunk, images.size(0))).to(at::kCPU, at::kDouble);
    // [B, C * k * k, L] with the (c, ky, kx) order of a conv weight's [C, k, k]; zero padding as the conv's.
    const at::Tensor columns = at::im2col(chunk, {kernel, kernel}, {1, 1}, {kernel / 2, kernel / 2}, {1, 1});
    const at::Tensor flat = columns.transpose(1, 2).reshape({-1, dim});
    moment.addmm_(flat.t(), flat);
    patches += flat.size(0);
  }
  moment.div_(static_cast<double>(patches));
  auto [eigenvalues, eigenvectors] = at::linalg_eigh(moment);  // ascending eigenvalues; eigenvectors in columns
  const int64_t pairs = std::min(filters / 2, dim);
  const at::Tensor top = at::arange(dim - 1, dim - 1 - pairs, -1, at::kLong);
  const at::Tensor scale = eigenvalues.index_select(0, top).clamp_min(0).add(eps).rsqrt();
  const at::Tensor whitening = eigenvectors.index_select(1, top).t().mul(scale.unsqueeze(1));  // [pairs, dim]
  return at::cat({whitening, whitening.neg()}).reshape({2 * pairs, channels, kernel, kernel}).to(at::kFloat);
}

} // namespace fastloop
