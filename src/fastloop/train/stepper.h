// The training loop's step over a TrainSetup, shared by `fastloop train` and the bench's cells so the
// bench times the code users run: micro-steps (DDP no_sync on all but a cycle's last, the CUDA graph once
// warmed up) and, at each cycle's end, the optimizer step (gradient sync, inf/nan check, scheduled LR and
// momentum, Lookahead, the weights' EMA).
// The bench passes a PhaseRecorder to see where the time goes; train passes none and pays nothing.
#pragma once

#include "fastloop/train/cuda_graph.h"
#include "fastloop/train/phase_recorder.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/setup.h"

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

namespace fastloop {

/// How a cycle's optimizer step went.
struct CycleResult {
  bool finite = true;   // every loss of the cycle was finite (always true under the fp16 scaler, which skips itself)
  bool stepped = false; // the update was applied (false: skipped for inf/nan)
  double lr = 0.0;      // the learning rate it used
};

class Stepper {
 public:
  /// `announce`: print one line when --cuda-graph captures or why it does not.
  Stepper(TrainSetup& setup, LrSchedule schedule, bool announce);

  /// Forward and backward of micro-batch `micro` (0-based) of a cycle of `cycle_length`; the last one
  /// starts the gradient all-reduce. Returns the loss, detached (no device sync).
  at::Tensor micro_step(const at::Tensor& images, const at::Tensor& labels, int64_t micro, int64_t cycle_length,
                        PhaseRecorder* recorder = nullptr);

  /// Ends the cycle as optimizer step `step` (0-based, the schedule's clock). Without a scaler a
  /// non-finite loss skips the update on every rank alike; the caller applies --nan-policy.
  CycleResult optimizer_step(int64_t step, PhaseRecorder* recorder = nullptr);

  /// --time-budget's re-plan: from optimizer step `from` on, the schedule ends at `new_total` steps.
  void schedule_replan(int64_t from, int64_t new_total) { schedule_.replan(from, new_total); }

  bool graphed() const { return graph_ != nullptr; }
  /// Why --cuda-graph is not capturing (empty while it may still capture, or when it did).
  const std::string& graph_refusal() const { return graph_refusal_; }

 private:
  void graph_try_capture(const at::Tensor& images, const at::Tensor& labels, int64_t cycle_length);

  TrainSetup& setup_;
  LrSchedule schedule_;
  bool announce_;
  std::unique_ptr<GraphedStep> graph_;
  std::string graph_refusal_;
  int64_t eager_steps_ = 0;  // optimizer steps run eagerly in this process (a resumed run warms up again)
  at::Tensor cycle_finite_;  // every loss of the current cycle was finite (no-scaler runs)
};

} // namespace fastloop
