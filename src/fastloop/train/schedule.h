// Learning-rate schedules as pure functions of the optimizer step, so a resumed run needs no
// scheduler state beyond the step count: constant, linear warm-up + cosine, one-cycle, step decay.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>

namespace fastloop {

class LrSchedule {
 public:
  /// total_steps and steps_per_epoch count optimizer steps.
  LrSchedule(const ScheduleConfig& config, double peak_lr, int64_t total_steps, int64_t steps_per_epoch);

  /// Learning rate for optimizer step `step` (0-based).
  double lr_at(int64_t step) const;

 private:
  ScheduleConfig config_;
  double peak_lr_;
  int64_t total_steps_;
  int64_t steps_per_epoch_;
};

} // namespace fastloop
