// The training step.
#include "fastloop/train/step.h"

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

bool train_optimizer_step(torch::optim::Optimizer& optimizer, GradScaler& scaler, const StepOptions& options,
                          PhaseRecorder* recorder) {
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
