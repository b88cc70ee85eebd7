// Progressive resizing (progressive_resize.h): the side schedule as pure arithmetic, the batch resized by
// ATen's own antialiased bilinear kernel, and the schedule's clock warped by re-plans as LrSchedule's is.
#include "fastloop/train/progressive_resize.h"

#include "fastloop/train/budget_plan.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cmath>

namespace fastloop {

ResizeOptions resize_options(const DataConfig& data) {
  ResizeOptions options;
  options.min_side = data.resize_min;
  options.start = data.resize_start;
  options.end = data.resize_end;
  return options;
}

int64_t resize_side_at(const ResizeOptions& options, int64_t full_side, double fraction) {
  if (!options.on() || options.min_side >= full_side || fraction >= options.end) return full_side;
  if (fraction <= options.start) return options.min_side;
  const double grown = static_cast<double>(full_side - options.min_side) * (fraction - options.start) /
                       (options.end - options.start);
  // Floored in double before the multiple: 15.999... from a fraction's rounding must not lose 4 pixels.
  const auto side = static_cast<int64_t>(std::floor(static_cast<double>(options.min_side) + grown + 1e-9));
  return std::clamp(side / kResizeMultiple * kResizeMultiple, options.min_side, full_side);
}

int64_t resize_side(const ResizeOptions& options, int64_t full_side, int64_t step, int64_t total_steps) {
  const double fraction = static_cast<double>(step) / static_cast<double>(std::max<int64_t>(total_steps, 1));
  return resize_side_at(options, full_side, fraction);
}

at::Tensor resize_batch(const at::Tensor& images, int64_t side) {
  TORCH_CHECK(images.dim() == 4, "resize_batch: images must be [B, C, H, W], got ", images.sizes());
  TORCH_CHECK(side >= 1, "resize_batch: the side must be >= 1 pixel, got ", side);
  const int64_t height = images.size(2), width = images.size(3);
  if (side == height) return images;
  const int64_t resized_width =
      width == height ? side : std::max<int64_t>(1, std::llround(static_cast<double>(width * side) / height));
  // ATen's CPU antialiased kernels take float and double only: half and bfloat16 batches (--amp) go
  // through float32 and back.
  const at::ScalarType dtype = images.scalar_type();
  const bool widen = dtype != at::kFloat && dtype != at::kDouble;
  const at::Tensor input = widen ? images.to(at::kFloat) : images;
  at::Tensor resized = at::_upsample_bilinear2d_aa(input, {side, resized_width}, /*align_corners=*/false);
  if (widen) resized = resized.to(dtype);
  return resized.contiguous(images.suggest_memory_format());
}

ResizeSchedule::ResizeSchedule(const ResizeOptions& options, int64_t total_steps)
    : options_(options), total_steps_(std::max<int64_t>(total_steps, 1)), planned_total_(total_steps_) {}

double ResizeSchedule::fraction(int64_t step) const {
  double s = static_cast<double>(step);
  for (auto it = replans_.rbegin(); it != replans_.rend(); ++it)
    s = schedule_warp(s, it->from, it->old_total, it->new_total);
  return s / static_cast<double>(planned_total_);
}

void ResizeSchedule::replan(int64_t from, int64_t new_total) {
  new_total = std::max<int64_t>(new_total, 1);
  if (new_total == total_steps_) return;
  replans_.push_back({from, total_steps_, new_total});
  total_steps_ = new_total;
}

} // namespace fastloop
