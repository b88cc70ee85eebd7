// --mixup / --cutmix: timm's Mixup in 'batch' mode. Per batch: with both on, cutmix with probability 0.5
// (switch_prob), else mixup; lambda ~ Beta(alpha, alpha); image i is mixed with image N-1-i (timm's
// x.flip(0)); a cutmix box clipped by the border corrects lambda to the area actually kept; the targets
// become soft ones, label smoothing folded in (timm's mixup_target). The mixing runs in place on the
// batch buffer, pair by pair (each pair's two images exchange their parts), so no copy of the batch is
// made. The draws come from a generator seeded by (seed, step, micro-batch, rank): a resumed run mixes
// the same way, whatever happened before.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/arg.h>

#include <cstdint>

namespace fastloop {

struct MixupOptions {
  TORCH_ARG(double, mixup_alpha) = 0.0;   // 0: no mixup
  TORCH_ARG(double, cutmix_alpha) = 0.0;  // 0: no cutmix
  TORCH_ARG(double, switch_prob) = 0.5;   // with both on: probability of cutmix for a batch
  TORCH_ARG(double, label_smoothing) = 0.0;
  TORCH_ARG(int64_t, num_classes) = 10;
  TORCH_ARG(uint64_t, seed) = 0;
};

/// One batch's draw: lambda (the share of each image kept), and for cutmix the box [y0, y1) x [x0, x1).
struct MixParams {
  double lam = 1.0;
  bool cutmix = false;
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
};

class Mixup {
 public:
  explicit Mixup(MixupOptions options);

  bool enabled() const { return options_.mixup_alpha() > 0 || options_.cutmix_alpha() > 0; }

  /// The draw for micro-batch `micro` of optimizer step `step` on `rank`, for images of height x width.
  MixParams draw(int64_t step, int64_t micro, int64_t rank, int64_t height, int64_t width) const;

  /// Mixes `images` [N, C, H, W] (any memory format) in place by `params`; returns the soft targets
  /// [N, classes] (float32) for `labels` [N].
  at::Tensor apply(at::Tensor& images, const at::Tensor& labels, const MixParams& params) const;

 private:
  MixupOptions options_;
};

/// timm's mixup_target: smoothed one-hot of `labels` times lam plus that of labels.flip(0) times 1 - lam.
at::Tensor mixup_target(const at::Tensor& labels, int64_t num_classes, double lam, double smoothing);

/// timm's rand_bbox + cutmix_bbox_and_lam for a box centred at (cy, cx): the box and corrected lambda.
MixParams cutmix_box(int64_t height, int64_t width, double lam, int64_t cy, int64_t cx);

} // namespace fastloop
