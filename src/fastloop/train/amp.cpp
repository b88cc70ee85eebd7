// Autocast scope and GradScaler. The scaler calls ATen's _amp_foreach_non_finite_check_and_unscale_
// and _amp_update_scale_, which have CPU and CUDA kernels in every LibTorch fastloop supports.
#include "fastloop/train/amp.h"

#include "fastloop/core/compat.h"
#include "fastloop/core/errors.h"

#include <ATen/ATen.h>

namespace fastloop {

AmpPolicy amp_policy(const std::string& amp) {
  if (amp == "fp16") return {true, at::kHalf, true};
  if (amp == "bf16") return {true, at::kBFloat16, false};
  if (amp == "off") return {};
  throw InputError("--amp " + amp + ": expected off, fp16 or bf16");
}

AutocastScope::AutocastScope(at::DeviceType device, bool enabled, at::ScalarType dtype)
    : device_(device),
      enabled_(enabled),
      was_enabled_(compat::autocast_enabled(device)),
      was_dtype_(compat::autocast_dtype(device)) {
  if (!enabled_) return;
  compat::autocast_set(device_, true, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();  // drop cached casts of weights
  compat::autocast_set(device_, was_enabled_, was_dtype_);
}

GradScaler::GradScaler(GradScalerOptions options) : options_(options) {
  scale_ = at::full({1}, options_.init_scale(), at::kFloat);
  growth_tracker_ = at::zeros({1}, at::kInt);
  found_inf_ = at::zeros({1}, at::kFloat);
}

at::Tensor GradScaler::scale(const at::Tensor& loss) {
  if (!enabled()) return loss;
  if (scale_.device() != loss.device()) {  // the scaler's state follows the model's device
    scale_ = scale_.to(loss.device());
    growth_tracker_ = growth_tracker_.to(loss.device());
    found_inf_ = found_inf_.to(loss.device());
  }
  return loss * scale_.to(loss.scalar_type());
}

void GradScaler::unscale(torch::optim::Optimizer& optimizer) {
  if (!enabled() || unscaled_) return;
  std::vector<at::Tensor> grads;
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params())
      if (p.grad().defined()) grads.push_back(p.mutable_grad());
  found_inf_.zero_();
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
  if (found_inf_reduce_) found_inf_reduce_(found_inf_);
  unscaled_ = true;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!enabled()) {
    optimizer.step();
    return true;
  }
  unscale(optimizer);
  if (found_inf_.item<float>() != 0.0f) return false;  // a skipped step, as in PyTorch
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!enabled()) return;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor(), options_.backoff_factor(),
                         options_.growth_interval());
  unscaled_ = false;
}

double GradScaler::current_scale() const { return scale_.item<double>(); }

void GradScaler::save(torch::serialize::OutputArchive& archive) const {
  archive.write("scale", scale_.cpu(), /*is_buffer=*/true);
  archive.write("growth_tracker", growth_tracker_.cpu(), /*is_buffer=*/true);
}

void GradScaler::load(torch::serialize::InputArchive& archive) {
  at::Tensor scale, tracker;
  archive.read("scale", scale, /*is_buffer=*/true);
  archive.read("growth_tracker", tracker, /*is_buffer=*/true);
  scale_ = scale.to(scale_.device());
  growth_tracker_ = tracker.to(growth_tracker_.device());
}

} // namespace fastloop
