// The training step.
#include "fastloop/train/step.h"

#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>

namespace fastloop {

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing) {
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
}

at::Tensor train_micro_step(ClassifierImpl& model, const at::Tensor& images, const at::Tensor& labels,
                            const StepOptions& options, int64_t micro_batches, GradScaler& scaler,
                            PhaseRecorder* recorder) {
  at::Tensor loss;
  {
    AutocastScope autocast(images.device().type(), options.amp.autocast, options.amp.dtype);
    loss = classification_loss(model.forward(images), labels, options.label_smoothing);
  }
  phase_mark(recorder, &TimeSplit::forward);
  // Backward runs outside autocast, as in PyTorch; the loss itself is float32 (cross_entropy autocasts up).
  scaler.scale(micro_batches > 1 ? loss / static_cast<double>(micro_batches) : loss).backward();
  phase_mark(recorder, &TimeSplit::backward);
  return loss.detach();
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm) {
  std::vector<at::Tensor> grads;
  for (const auto& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return at::zeros({});
  at::NoGradGuard no_grad;
  const at::Tensor total = at::linalg_vector_norm(at::stack(at::_foreach_norm(grads, 2)), 2);
  const at::Tensor coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
  at::_foreach_mul_(grads, coef);
  return total;
}

bool train_optimizer_step(torch::optim::Optimizer& optimizer, GradScaler& scaler, const StepOptions& options,
                          PhaseRecorder* recorder) {
  if (options.clip_grad_norm > 0) {  // on the true gradients: after the fp16 scaler divides its scale out
    scaler.unscale(optimizer);
    std::vector<at::Tensor> params;
    for (auto& group : optimizer.param_groups()) params.insert(params.end(), group.params().begin(), group.params().end());
    clip_grad_norm(params, options.clip_grad_norm);
  }
  const bool stepped = scaler.step(optimizer);
  scaler.update();
  if (!options.keep_gradients) optimizer.zero_grad(options.set_to_none);
  phase_mark(recorder, &TimeSplit::optimizer);
  return stepped;
}

at::Tensor train_step(ClassifierImpl& model, torch::optim::Optimizer& optimizer, const at::Tensor& images,
                      const at::Tensor& labels, double label_smoothing) {
  StepOptions options;
  options.label_smoothing = label_smoothing;
  GradScaler no_scaling(GradScalerOptions().enabled(false));
  auto loss = train_micro_step(model, images, labels, options, 1, no_scaling);
  train_optimizer_step(optimizer, no_scaling, options);
  return loss;
}

} // namespace fastloop
