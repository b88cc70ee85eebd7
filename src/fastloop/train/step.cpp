// The training step.
#include "fastloop/train/step.h"

#include <torch/nn/functional/loss.h>

namespace fastloop {

at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing) {
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
}

at::Tensor train_step(ClassifierImpl& model, torch::optim::Optimizer& optimizer, const at::Tensor& images,
                      const at::Tensor& labels, double label_smoothing) {
  auto loss = classification_loss(model.forward(images), labels, label_smoothing);
  loss.backward();
  optimizer.step();
  optimizer.zero_grad(/*set_to_none=*/true);
  return loss.detach();
}

} // namespace fastloop
