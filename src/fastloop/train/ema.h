// --ema-decay: an exponential moving average of the weights, timm's ModelEmaV2 semantics. The average
// lives in a second model of the same architecture: after every optimizer step each floating-point entry
// of the state dict (parameters and BatchNorm running statistics) becomes decay * ema + (1 - decay) * w;
// integer entries (num_batches_tracked) are copied, as timm's ModelEmaV3 does. It is evaluated,
// checkpointed and exported (fastloop export --ema) like the model itself.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <vector>

namespace fastloop {

class ProcessGroup;

struct EmaOptions {
  TORCH_ARG(double, decay) = 0.9998;
  /// TensorFlow ExponentialMovingAverage's num_updates ramp: after step s the decay is
  /// min(decay, (1 + s) / (10 + s)), so the early average forgets the random initialisation quickly.
  TORCH_ARG(bool, warmup) = false;
};

class ModelEma {
 public:
  /// `average`: a model of `model`'s architecture, on its device and in its layout; its state is set to
  /// `model`'s now (timm's deepcopy at construction).
  ModelEma(Classifier average, const ClassifierImpl& model, EmaOptions options);

  /// The decay the update after optimizer step `step` (0-based) uses.
  double decay_at(int64_t step) const;
  /// Sets the average to `model`'s state (timm's set()).
  void set(const ClassifierImpl& model);
  /// Folds `model`'s state after optimizer step `step` into the average.
  void update(const ClassifierImpl& model, int64_t step);

  /// Distributed runs: rank 0's average on every rank (the BatchNorm statistics differ per rank).
  void sync(ProcessGroup& group);

  ClassifierImpl& module() { return *average_; }
  const EmaOptions& options() const { return options_; }

 private:
  Classifier average_;
  EmaOptions options_;
  std::vector<at::Tensor> floats_, integers_;  // the average's state entries, in state-dict order
};

/// The state dict entries of `module` in PyTorch's order (parameters then buffers of each module, pre-order).
std::vector<at::Tensor> module_state_tensors(const torch::nn::Module& module);

} // namespace fastloop
