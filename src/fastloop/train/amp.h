// Automatic mixed precision: an autocast scope for CPU or CUDA, and GradScaler with PyTorch's
// semantics (scale 2^16, x2 after 2000 clean steps, x0.5 and a skipped step on inf/nan).
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/arg.h>
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <functional>
#include <string>

namespace fastloop {

/// What --amp means for a run, derived in one place (amp_policy) for the step, the loader and evaluation.
struct AmpPolicy {
  bool autocast = false;
  at::ScalarType dtype = at::kFloat;  // autocast's compute dtype; batches are made in it (kFloat when off)
  bool grad_scaling = false;          // fp16 only: bf16 keeps fp32's exponent range and needs no scaler
};

/// "off" | "fp16" | "bf16" → the policy; throws InputError on anything else.
AmpPolicy amp_policy(const std::string& amp);

/// Autocast on `device` for the scope's lifetime (forward and loss), restoring the previous state.
class AutocastScope {
 public:
  AutocastScope(at::DeviceType device, bool enabled, at::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType device_;
  bool enabled_;
  bool was_enabled_;
  at::ScalarType was_dtype_;
};

struct GradScalerOptions {
  TORCH_ARG(bool, enabled) = true;
  TORCH_ARG(double, init_scale) = 65536.0;  // 2^16
  TORCH_ARG(double, growth_factor) = 2.0;
  TORCH_ARG(double, backoff_factor) = 0.5;
  TORCH_ARG(int64_t, growth_interval) = 2000;  // clean steps before the scale grows
};

/// torch.amp.GradScaler for LibTorch: scale(loss).backward(); step(optimizer); update().
/// Disabled, every call is a pass-through, so the training step needs no branches.
class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  at::Tensor scale(const at::Tensor& loss);
  /// Divides the gradients by the scale and records whether any is inf/nan (once per step).
  void unscale(torch::optim::Optimizer& optimizer);
  /// Unscales if not yet done and steps unless a gradient was inf/nan; returns whether it stepped.
  bool step(torch::optim::Optimizer& optimizer);
  /// Grows or backs off the scale from this step's inf/nan finding.
  void update();

  /// Distributed runs: `reduce` turns this rank's inf/nan finding (float32 [1]) into the maximum over
  /// ranks, so every rank skips the same steps whatever its own gradients held.
  void set_found_inf_reduce(std::function<void(at::Tensor&)> reduce) { found_inf_reduce_ = std::move(reduce); }

  double current_scale() const;
  bool enabled() const { return options_.enabled(); }

  void save(torch::serialize::OutputArchive& archive) const;
  void load(torch::serialize::InputArchive& archive);

 private:
  GradScalerOptions options_;
  at::Tensor scale_;           // float32 [1]
  at::Tensor growth_tracker_;  // int32 [1]: clean steps since the last change
  at::Tensor found_inf_;       // float32 [1]: this step's finding
  bool unscaled_ = false;
  std::function<void(at::Tensor&)> found_inf_reduce_;
};

} // namespace fastloop
