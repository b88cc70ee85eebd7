// --lookahead-steps: Lookahead (Zhang et al. 2019, "Lookahead Optimizer: k steps forward, 1 step back") over
// the run's optimizer. Slow weights start as a copy of the parameters; after every k-th optimizer step that
// was applied, slow += alpha * (fast - slow) and the parameters restart from slow. Parameters only, as timm's
// timm/optim/lookahead.py (BatchNorm statistics are left alone); checkpointed so a resume continues bitwise.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <cstdint>
#include <vector>

namespace fastloop {

class ProcessGroup;

struct LookaheadOptions {
  /// k: applied optimizer steps between two synchronisations of the slow and fast weights.
  TORCH_ARG(int64_t, steps) = 6;
  /// The slow weights' step towards the fast ones, in (0, 1]; 1 with k = 1 is plain training.
  TORCH_ARG(double, alpha) = 0.5;
};

class Lookahead {
 public:
  /// Slow weights: a copy of `model`'s parameters now, on their device and in their layout.
  Lookahead(const ClassifierImpl& model, LookaheadOptions options);

  /// After an applied optimizer step of `model`: counts it and, every k-th, moves the slow weights alpha of
  /// the way to the parameters and copies them back. Returns whether it synchronised.
  bool step(ClassifierImpl& model);

  /// Sets the slow weights to `model`'s parameters and the count to 0 (a resume from a checkpoint without them).
  void set(const ClassifierImpl& model);

  /// Distributed runs: rank 0's slow weights and count on every rank, after DDP's broadcast of the parameters.
  void sync(ProcessGroup& group);

  /// The slow weights ("slow_<i>", in parameter order) and the count ("applied") into `archive`.
  void save(torch::serialize::OutputArchive& archive) const;
  /// What save() wrote, copied into this run's slow weights; throws c10::Error when it does not match them.
  void load(torch::serialize::InputArchive& archive);

  const std::vector<at::Tensor>& slow() const { return slow_; }
  int64_t applied() const { return applied_; }  // applied optimizer steps counted so far
  const LookaheadOptions& options() const { return options_; }

 private:
  LookaheadOptions options_;
  std::vector<at::Tensor> slow_;  // one per parameter of the model, in parameters() order
  int64_t applied_ = 0;
};

} // namespace fastloop
