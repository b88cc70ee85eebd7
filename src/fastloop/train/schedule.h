// Learning-rate schedules as pure functions of the optimizer step, so a resumed run needs no
// scheduler state beyond the step count: constant, linear warm-up + cosine or
// linear decay to zero, one-cycle, step decay.
// One-cycle anneals by cosines or linearly and can also cycle the momentum inversely to the learning rate,
// as PyTorch's OneCycleLR does.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>
#include <vector>

namespace fastloop {

class LrSchedule {
 public:
  /// total_steps and steps_per_epoch count optimizer steps.
  LrSchedule(const ScheduleConfig& config, double peak_lr, int64_t total_steps, int64_t steps_per_epoch);

  /// Learning rate for optimizer step `step` (0-based).
  double lr_at(int64_t step) const;

  /// Whether the schedule sets the momentum (onecycle with --cycle-momentum).
  bool cycles_momentum() const;
  /// Momentum (AdamW: beta1) for optimizer step `step`: max_momentum at the start and end, base_momentum
  /// at the learning-rate peak, on the same phases as the learning rate.
  double momentum_at(int64_t step) const;

  /// A budgeted run re-planned at step `from` to `new_total` steps: the steps from `from` on follow the
  /// rest of the schedule compressed (or stretched) onto the new length (schedule_warp, budget_plan.h),
  /// so it still ends where it would have. Steps before `from` keep their values.
  void replan(int64_t from, int64_t new_total);
  int64_t total_steps() const { return total_steps_; }

 private:
  /// OneCycleLR's two phases (cosine or linear): start → peak over pct_start of the steps, then peak → end.
  double onecycle_at(double step, double start, double peak, double end) const;
  /// The step of the schedule as first planned that `step` takes after the re-plans.
  double unwarped(int64_t step) const;

  struct Replan {
    int64_t from, old_total, new_total;
  };

  ScheduleConfig config_;
  double peak_lr_;
  int64_t total_steps_;
  int64_t steps_per_epoch_;
  int64_t planned_total_;        // total_steps_ before any re-plan: the clock the formulas run on
  std::vector<Replan> replans_;  // in the order they were made
};

} // namespace fastloop
