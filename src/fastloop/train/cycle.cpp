// The micro-batch cycle (cycle.h): mixup, the micro-step with out-of-memory explained, the optimizer step
// and the skip policy, as `fastloop train` and the bench's cells both run them.
#include "fastloop/train/cycle.h"

#include "fastloop/core/errors.h"

#include <c10/util/Exception.h>

#include <algorithm>

namespace fastloop {

RunLength run_length(const TrainConfig& config, int64_t batches_per_epoch, int64_t train_size) {
  RunLength length;
  length.batches = batches_per_epoch;
  if (length.batches == 0)
    throw InputError("--batch-size " + std::to_string(config.data.batch_size) + " is larger than the " +
                     std::to_string(train_size) + " training samples of " + config.data.source);
  length.accumulate = config.perf.accumulate;
  length.steps_per_epoch = (length.batches + length.accumulate - 1) / length.accumulate;
  length.total_steps = config.run.epochs * length.steps_per_epoch;
  if (config.run.max_steps > 0) length.total_steps = std::min(length.total_steps, config.run.max_steps);
  return length;
}

TrainCycle::TrainCycle(TrainSetup& setup, const RunLength& length, bool announce)
    : setup_(setup),
      stepper_(setup,
               LrSchedule(setup.config.schedule, setup.config.optim.lr, length.total_steps, length.steps_per_epoch),
               announce),
      resize_(resize_options(setup.config.data), length.total_steps) {}

void TrainCycle::replan(int64_t from, int64_t new_total) {
  stepper_.schedule_replan(from, new_total);
  resize_.replan(from, new_total);
}

at::Tensor TrainCycle::micro_step(Batch& batch, int64_t step, int64_t micro, int64_t cycle_length,
                                  PhaseRecorder* recorder) {
  at::Tensor targets = batch.labels;  // or mixup's soft targets
  if (setup_.mixup.enabled()) {
    const MixParams params = setup_.mixup.draw(step, micro, setup_.rank(), batch.images.size(2), batch.images.size(3));
    targets = setup_.mixup.apply(batch.images, batch.labels, params);
  }
  // --resize-min, after mixup (its boxes are drawn on the loaded side): the full side when off.
  const int64_t full_side = batch.images.size(2);
  const int64_t side = resize_fixed_ < 0    ? resize_.side(full_side, step)
                       : resize_fixed_ == 0 ? full_side
                                            : std::min(resize_fixed_, full_side);
  if (side != full_side) batch.images = resize_batch(batch.images, side);
  try {
    return stepper_.micro_step(batch.images, targets, micro, cycle_length, recorder);
  } catch (const c10::Error& e) {  // CUDA's OutOfMemoryError, the CPU allocator's refusal
    if (!is_out_of_memory(e)) throw;
    throw RunError(out_of_memory_message(setup_.config, batch.images, e.what_without_backtrace()));
  }
}

CycleResult TrainCycle::optimizer_step(const TrainPosition& position, const SavedCheckpoint& last_saved,
                                       PhaseRecorder* recorder) {
  const CycleResult cycle = stepper_.optimizer_step(position.step, recorder);
  const RunConfig& run = setup_.config.run;
  if (!cycle.finite && run.nan_policy == "stop") throw RunError(nonfinite_loss_message(position, last_saved));
  consecutive_ = cycle.stepped ? 0 : consecutive_ + 1;
  skipped_ += cycle.stepped ? 0 : 1;
  if (run.max_skipped_steps > 0 && consecutive_ >= run.max_skipped_steps)
    throw RunError(skipped_steps_message(position, consecutive_, setup_.scaler.enabled(), last_saved));
  return cycle;
}

} // namespace fastloop
