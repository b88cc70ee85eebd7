// One training step: forward, cross-entropy (with label smoothing), backward, optimizer update,
// and gradients released with zero_grad(set_to_none) so the next backward writes them fresh.
#pragma once

#include "fastloop/models/classifier.h"

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

namespace fastloop {

/// Cross-entropy of `logits` against `labels`, mean over the batch.
at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing);

/// Runs one step on (images, labels) and returns the loss, detached (no device sync).
at::Tensor train_step(ClassifierImpl& model, torch::optim::Optimizer& optimizer, const at::Tensor& images,
                      const at::Tensor& labels, double label_smoothing);

} // namespace fastloop
