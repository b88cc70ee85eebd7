// --cuda-graph: the training micro-step (autocast forward, loss, scaled backward) captured once into a
// CUDA graph after a few eager warm-up steps, then replayed for every batch of the same shape — one
// graph launch instead of hundreds of kernel launches, the guide's remedy for launch-bound steps.
// The optimizer step runs eagerly after each replay: its learning rate changes every step and
// LibTorch's optimizers take it as a host double. The graph owns the gradient tensors, so they are
// overwritten by each replay and must not be freed by zero_grad(set_to_none) (StepOptions::keep_gradients).
#pragma once

#include "fastloop/models/classifier.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/step.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

namespace fastloop {

class GraphedStep {
 public:
  virtual ~GraphedStep() = default;
  /// One micro-step on this batch: copied into the graph's inputs and replayed when the shape is the
  /// captured one, else run eagerly (gradients zeroed first). Returns the loss, detached.
  virtual at::Tensor run(const at::Tensor& images, const at::Tensor& labels) = 0;
};

/// Captures train_micro_step(model, images, labels, options, 1, scaler). Returns nullptr and sets
/// `why` when capture is impossible: a build without CUDA, a CPU model, or accumulation (each
/// micro-step would overwrite the gradients of the one before).
std::unique_ptr<GraphedStep> graphed_step_make(ClassifierImpl& model, const StepOptions& options, GradScaler& scaler,
                                               const at::Tensor& images, const at::Tensor& labels,
                                               int64_t accumulate, std::string* why);

namespace detail {
/// Defined in cuda_graph_cuda.cpp, which CUDA builds alone compile.
std::unique_ptr<GraphedStep> graphed_step_make_cuda(ClassifierImpl& model, const StepOptions& options,
                                                    GradScaler& scaler, const at::Tensor& images,
                                                    const at::Tensor& labels);
}  // namespace detail

} // namespace fastloop
