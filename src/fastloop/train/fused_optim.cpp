// Fused optimizer steps. Parameters whose state is not yet made (first step) and those with state
// are updated in separate fused calls, since _fused_sgd_ takes one is_first_step for the list.
#include "fastloop/train/fused_optim.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

namespace fastloop {

namespace {
/// The closure's loss, computed with gradients on, as torch.optim's step(closure) does.
at::Tensor closure_loss(const torch::optim::Optimizer::LossClosure& closure) {
  if (!closure) return {};
  at::AutoGradMode enable_grad(true);
  return closure();
}
}  // namespace

at::Tensor FusedSGD::step(LossClosure closure) {
  at::Tensor loss = closure_loss(closure);
  at::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
    std::vector<at::Tensor> params[2], grads[2], buffers[2];  // [0]: state exists, [1]: first step
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto* key = p.unsafeGetTensorImpl();
      auto it = state_.find(key);
      const bool first = it == state_.end();
      if (first && o.momentum() != 0) {
        auto state = std::make_unique<torch::optim::SGDParamState>();
        state->momentum_buffer(at::empty_like(p));
        it = state_.emplace(key, std::move(state)).first;
      }
      params[first].push_back(p);
      grads[first].push_back(p.grad());
      if (o.momentum() != 0)
        buffers[first].push_back(static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer());
    }
    for (int first : {0, 1}) {
      if (params[first].empty()) continue;
      at::_fused_sgd_(params[first], grads[first], buffers[first], o.weight_decay(), o.momentum(), o.lr(),
                      o.dampening(), o.nesterov(), /*maximize=*/false, /*is_first_step=*/first == 1);
    }
  }
  return loss;
}

at::Tensor FusedAdamW::step(LossClosure closure) {
  at::Tensor loss = closure_loss(closure);
  at::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto* key = p.unsafeGetTensorImpl();
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(0);
        state->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
        state->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        if (o.amsgrad()) state->max_exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(state)).first;
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*it->second);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      if (o.amsgrad()) max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
      // LibTorch keeps the step as an integer; the kernel wants the already incremented step as a
      // float tensor (torch.optim.AdamW increments it with _foreach_add_ before the fused call).
      state.step(state.step() + 1);
      steps.push_back(at::full({}, static_cast<double>(state.step()), p.options().dtype(at::kFloat)));
    }
    if (params.empty()) continue;
    const auto [beta1, beta2] = o.betas();  // NOLINT
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, o.lr(), beta1, beta2,
                      o.weight_decay(), o.eps(), o.amsgrad(), /*maximize=*/false);
  }
  return loss;
}

} // namespace fastloop
