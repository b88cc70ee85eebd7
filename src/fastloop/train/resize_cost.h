// --time-budget with --resize-min: what a step costs under progressive resizing. Calibration times two
// sides (the full one, and --resize-min briefly); a step at a side between them is modelled as linear in
// the side's area. The ramp is defined in fractions of the run, so the mean cost over the run (what the
// plan counts per step) and over what is left of it (what a re-plan counts) do not depend on the number
// of steps. Pure arithmetic, no clock.
#pragma once

#include "fastloop/train/progressive_resize.h"

#include <cstdint>
#include <string>

namespace fastloop {

/// Seconds per optimizer step at the full side and at --resize-min, as calibration measured them.
struct ResizeStepCosts {
  ResizeOptions options;  // off: every factor 1
  int64_t full_side = 0;
  double full_s = 0.0;    // one step at the full side (no resizing)
  double min_s = 0.0;     // one step at options.min_side (its resize included)

  bool on() const { return options.on() && options.min_side < full_side && full_s > 0 && min_s > 0; }

  /// A step at `side` over a step at the full side: min_s / full_s at min_side, 1 at the full side, linear
  /// in side^2 in between. 1 when off.
  double factor(int64_t side) const;

  /// The mean factor over the run's fractions [from, 1] (a step's share of the run each), integrated
  /// exactly over the schedule's pieces of constant side. 1 when off.
  double mean_factor(double from = 0.0) const;

  /// The step cost a plan counts: full_s times the mean factor over the whole run.
  double planned_step_s() const { return full_s * mean_factor(0.0); }
};

/// A budgeted run's steps under --resize-min as RunBudget's checks see them: the step costs over the run's
/// schedule, re-planned with it. Check windows measure seconds per full-size step (`work` counts each step
/// as its factor), so a window of cheap low-resolution steps is not projected onto the full-size steps to
/// come; the remaining steps are projected with the mean factor over what is left of the schedule.
/// Off: work counts steps and every cost passes unchanged.
class ResizeCostModel {
 public:
  ResizeCostModel() = default;
  ResizeCostModel(const ResizeStepCosts& costs, int64_t total_steps);

  bool on() const { return costs_.on(); }
  const ResizeStepCosts& costs() const { return costs_; }

  /// The run's first `steps` optimizer steps in full-size steps: the sum of their factors.
  double work(int64_t steps);
  /// Seconds per step of the steps from `step` on, when a full-size step takes `full_step_s`.
  double step_s_after(int64_t step, double full_step_s) const;
  /// A full-size step's seconds when a plan's mean step (planned_step_s) takes `mean_step_s`.
  double full_step_s(double mean_step_s) const { return mean_step_s / costs_.mean_factor(0.0); }

  /// From optimizer step `from` on, the run ends at `new_total` steps (ResizeSchedule::replan).
  void replan(int64_t from, int64_t new_total) { schedule_.replan(from, new_total); }

  /// {"min_side", "full_side", "min_step_s", "full_step_s", "mean_factor"}: the plan's record.
  std::string json() const;
  /// "; --resize-min 16: 9.1 ms per step at 16 px to 31 ms at 28 px, 18 ms on average": the plan line's.
  std::string text() const;

 private:
  ResizeStepCosts costs_;
  ResizeSchedule schedule_;
  double work_ = 0.0;         // work(worked_steps_), summed once
  int64_t worked_steps_ = 0;
};

} // namespace fastloop
