// Mixup and cutmix, timm's definitions (timm/data/mixup.py: Mixup._params_per_batch, _mix_batch,
// rand_bbox, cutmix_bbox_and_lam, mixup_target), with a seeded C++ generator in place of numpy's.
#include "fastloop/train/mixup.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace fastloop {

namespace {
double beta_sample(std::mt19937_64& rng, double alpha) {  // Beta(a, a) = X / (X + Y), X, Y ~ Gamma(a, 1)
  std::gamma_distribution<double> gamma(alpha, 1.0);
  const double x = gamma(rng), y = gamma(rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}
}  // namespace

Mixup::Mixup(MixupOptions options) : options_(options) {}

MixParams Mixup::draw(int64_t step, int64_t micro, int64_t rank, int64_t height, int64_t width) const {
  std::seed_seq seq{static_cast<uint32_t>(options_.seed()), static_cast<uint32_t>(options_.seed() >> 32),
                    static_cast<uint32_t>(step), static_cast<uint32_t>(static_cast<uint64_t>(step) >> 32),
                    static_cast<uint32_t>(micro), static_cast<uint32_t>(rank)};
  std::mt19937_64 rng(seq);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const bool both = options_.mixup_alpha() > 0 && options_.cutmix_alpha() > 0;
  const bool use_cutmix = both ? uniform(rng) < options_.switch_prob() : options_.cutmix_alpha() > 0;
  MixParams params;
  params.lam = beta_sample(rng, use_cutmix ? options_.cutmix_alpha() : options_.mixup_alpha());
  if (!use_cutmix || params.lam == 1.0) return params;
  const int64_t cy = std::uniform_int_distribution<int64_t>(0, height - 1)(rng);
  const int64_t cx = std::uniform_int_distribution<int64_t>(0, width - 1)(rng);
  return cutmix_box(height, width, params.lam, cy, cx);
}

MixParams cutmix_box(int64_t height, int64_t width, double lam, int64_t cy, int64_t cx) {
  const double ratio = std::sqrt(1.0 - lam);
  const auto cut_h = static_cast<int64_t>(static_cast<double>(height) * ratio);  // int() truncates, as timm
  const auto cut_w = static_cast<int64_t>(static_cast<double>(width) * ratio);
  MixParams params;
  params.cutmix = true;
  params.y0 = std::clamp<int64_t>(cy - cut_h / 2, 0, height);
  params.y1 = std::clamp<int64_t>(cy + cut_h / 2, 0, height);
  params.x0 = std::clamp<int64_t>(cx - cut_w / 2, 0, width);
  params.x1 = std::clamp<int64_t>(cx + cut_w / 2, 0, width);
  const auto area = static_cast<double>((params.y1 - params.y0) * (params.x1 - params.x0));
  params.lam = 1.0 - area / static_cast<double>(height * width);  // correct_lam: the area actually pasted
  return params;
}

at::Tensor mixup_target(const at::Tensor& labels, int64_t num_classes, double lam, double smoothing) {
  const double off = smoothing / static_cast<double>(num_classes), on = 1.0 - smoothing + off;
  const auto one_hot = [&](const at::Tensor& l) {
    return at::full({l.size(0), num_classes}, off, l.options().dtype(at::kFloat)).scatter_(1, l.view({-1, 1}), on);
  };
  return one_hot(labels) * lam + one_hot(labels.flip(0)) * (1.0 - lam);
}

at::Tensor Mixup::apply(at::Tensor& images, const at::Tensor& labels, const MixParams& p) const {
  at::NoGradGuard no_grad;
  const int64_t n = images.size(0);
  if (p.lam != 1.0) {
    for (int64_t i = 0; i < n / 2; ++i) {  // image i with image n-1-i, as timm's x.flip(0); one image of scratch
      at::Tensor a = images[i], b = images[n - 1 - i];
      if (p.cutmix) {  // x[:, :, y0:y1, x0:x1] = x.flip(0)[...]: the pair swaps its boxes
        a = a.slice(1, p.y0, p.y1).slice(2, p.x0, p.x1), b = b.slice(1, p.y0, p.y1).slice(2, p.x0, p.x1);
        const at::Tensor a_box = a.clone();
        a.copy_(b), b.copy_(a_box);
      } else {  // x * lam + x.flip(0) * (1 - lam), rounded as timm's mul_ then add_
        const at::Tensor a_part = a.mul(1.0 - p.lam), b_part = b.mul(1.0 - p.lam);
        a.mul_(p.lam).add_(b_part), b.mul_(p.lam).add_(a_part);
      }
    }
  }
  return mixup_target(labels, options_.num_classes(), p.lam, options_.label_smoothing());
}

} // namespace fastloop
