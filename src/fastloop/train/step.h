// One training step, split where gradient accumulation needs it: a micro-step (autocast forward,
// loss ÷ micro-batches, scaled backward) run once per micro-batch, then the optimizer step
// (unscale, clip to --clip-grad-norm, skip on inf/nan, update, release gradients with zero_grad(set_to_none)).
#pragma once

#include "fastloop/models/classifier.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/phase_recorder.h"

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include <vector>

namespace fastloop {

struct StepOptions {
  double label_smoothing = 0.0;
  AmpPolicy amp;               // autocast on/off and its dtype (the scaler is the caller's)
  bool set_to_none = true;     // false: zero the gradients in place (the pre-2.0 default)
  bool keep_gradients = false; // a CUDA graph owns the gradient tensors and overwrites them: no zero_grad
  double clip_grad_norm = 0.0; // clip the gradients' global L2 norm to this after unscaling (0: off)
};

/// torch.nn.utils.clip_grad_norm_ (foreach path, no host sync): scales every gradient by
/// min(1, max_norm / (total_norm + 1e-6)); returns the total L2 norm before clipping (a 0-d tensor).
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

/// Cross-entropy of `logits` against `labels`, mean over the batch.
at::Tensor classification_loss(const at::Tensor& logits, const at::Tensor& labels, double label_smoothing);

/// Forward and backward of one micro-batch of a cycle of `micro_batches`; gradients add up to the
/// gradient of the cycle's mean loss. Returns the micro-batch's loss, detached (no device sync).
/// A `recorder` (the bench) gets the forward and backward phases marked.
at::Tensor train_micro_step(ClassifierImpl& model, const at::Tensor& images, const at::Tensor& labels,
                            const StepOptions& options, int64_t micro_batches, GradScaler& scaler,
                            PhaseRecorder* recorder = nullptr);

/// The update that ends a cycle. Returns false when the scaler skipped it (inf/nan gradients).
bool train_optimizer_step(torch::optim::Optimizer& optimizer, GradScaler& scaler, const StepOptions& options,
                          PhaseRecorder* recorder = nullptr);

/// A whole step on one batch: train_micro_step + train_optimizer_step, without AMP.
at::Tensor train_step(ClassifierImpl& model, torch::optim::Optimizer& optimizer, const at::Tensor& images,
                      const at::Tensor& labels, double label_smoothing);

} // namespace fastloop
