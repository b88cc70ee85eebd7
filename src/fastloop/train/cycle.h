// The micro-batch cycle of training, in one place for `fastloop train`'s loop and the bench's cells: the
// run's length (batches, accumulation cycles, optimizer steps; the batch-size check) and LR schedule
// derived once, and per batch mixup and the micro-step (out of memory explained), at each cycle's end the
// optimizer step with --nan-policy and --max-skipped-steps. The callers add only their once-in-a-while blocks.
#pragma once

#include "fastloop/data/loader/loader.h"
#include "fastloop/train/faults.h"
#include "fastloop/train/progressive_resize.h"
#include "fastloop/train/stepper.h"

#include <algorithm>
#include <cstdint>

namespace fastloop {

/// The run's counts: batches per epoch, accumulation cycles and optimizer steps.
struct RunLength {
  int64_t batches = 0, accumulate = 1, steps_per_epoch = 0, total_steps = 0;
  int64_t cycle_start(int64_t batch) const { return batch / accumulate * accumulate; }
  int64_t micro(int64_t batch) const { return batch - cycle_start(batch); }
  /// A partial cycle at an epoch's end steps too, with the batches it has (at least the one at hand: an epoch
  /// resumed on another number of ranks may number one more).
  int64_t cycle_length(int64_t batch) const {
    return std::max<int64_t>(1, std::min(accumulate, batches - cycle_start(batch)));
  }
};

/// The length of `config.run.epochs` epochs (capped by --max-steps) of `batches_per_epoch` batches.
/// Throws InputError when the batch is larger than the split's `train_size` samples (no batch at all).
RunLength run_length(const TrainConfig& config, int64_t batches_per_epoch, int64_t train_size);

/// One run's cycles over its TrainSetup: the trainer's Stepper on the schedule of `length`.
class TrainCycle {
 public:
  /// `announce`: print one line when --cuda-graph captures or why it does not.
  TrainCycle(TrainSetup& setup, const RunLength& length, bool announce);

  /// Micro-batch `micro` of a cycle of `cycle_length` in optimizer step `step`: mixup (--mixup/--cutmix,
  /// in place), --resize-min's side for the step (batch.images replaced by the resized batch), forward and
  /// backward. Returns the loss, detached. Out of memory is a RunError saying what to lower.
  at::Tensor micro_step(Batch& batch, int64_t step, int64_t micro, int64_t cycle_length,
                        PhaseRecorder* recorder = nullptr);

  /// The cycle's optimizer step `position.step`, then --nan-policy stop and --max-skipped-steps (RunError
  /// naming `last_saved`, the checkpoint to go back to).
  CycleResult optimizer_step(const TrainPosition& position, const SavedCheckpoint& last_saved = {},
                             PhaseRecorder* recorder = nullptr);

  /// --time-budget's re-plan: the schedule from optimizer step `from` on ends at `new_total` steps (the
  /// learning rate's and --resize-min's alike).
  void replan(int64_t from, int64_t new_total);
  /// --time-budget's calibration: every batch at `side` (never above its own) instead of --resize-min's
  /// schedule; 0: every batch as loaded. Calibration times full-size steps, then a few at --resize-min.
  void resize_fix(int64_t side) { resize_fixed_ = side; }
  const ResizeSchedule& resize_schedule() const { return resize_; }
  int64_t skipped_steps() const { return skipped_; }  // optimizer steps skipped for inf/nan
  const Stepper& stepper() const { return stepper_; }

 private:
  TrainSetup& setup_;
  Stepper stepper_;
  ResizeSchedule resize_;    // --resize-min over the run's optimizer steps
  int64_t resize_fixed_ = -1;  // resize_fix's side; -1: the schedule's
  int64_t skipped_ = 0, consecutive_ = 0;  // skipped in all, and in a row
};

} // namespace fastloop
