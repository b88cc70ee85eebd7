// One trial of `fastloop tune`: a few training steps of a configuration, timed the way a user feels
// them (data wait included), warm-up excluded, median. A trial that fails (out of memory, an option
// this build or device lacks) is a result with its reason, not an error.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>
#include <string>

namespace fastloop {

struct TrialOptions {
  int64_t warmup_steps = 2;   // untimed: first-touch allocations, oneDNN/cuDNN kernel choice, graph capture
  int64_t timed_steps = 5;    // median over these
};

struct TrialResult {
  bool ok = false;
  std::string failure;        // why it failed, when !ok
  double img_per_s = 0.0;     // images per optimizer step ÷ median step time
  double step_s = 0.0;        // median seconds per optimizer step
  double first_loss = 0.0;    // loss of the first step, before any update: compared across trials
  double seconds = 0.0;       // wall time the trial took, set-up included
};

/// Trains `config` for warmup + timed steps (no evaluation, no checkpoints, no output) and times it.
TrialResult trial_run(TrainConfig config, const TrialOptions& options = {});

} // namespace fastloop
