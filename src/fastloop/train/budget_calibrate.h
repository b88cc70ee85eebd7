// --time-budget in a run: the budget a config asks for, the calibration that measures this machine's
// step, evaluation and checkpoint costs on the real model and data (on a throw-away setup, so the planned
// run starts from the same seeded state as a run without it), and RunBudget, the plan the training loop
// follows and re-makes when the machine slows down (checked every 2% of the budget and at each epoch end)
// or runs faster than calibration measured (at epoch ends, and every 2% of the budget in the last epoch).
#pragma once

#include "fastloop/core/clock.h"
#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/train/budget_plan.h"
#include "fastloop/train/resize_cost.h"

#include <c10/core/Device.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// The seconds `config.run.time_budget` gives the run; 0: no budget. "off", a given --max-steps or
/// --epochs other than the default (8) turn it off: they set the run's length themselves (and so the
/// recorded plan replays with --epochs E --max-steps N). Throws InputError for a text that is no duration,
/// and for a budget that would resume a checkpoint or run distributed (`world_size` ranks): neither is
/// planned yet. --resume auto without a checkpoint starts fresh, planned.
double budget_seconds(const TrainConfig& config, int64_t world_size = 1);

/// What calibration measured: the costs (spent_s not yet filled) and the run's steps per epoch.
struct Calibration {
  BudgetCosts costs;
  int64_t steps_per_epoch = 0;
  int64_t steps = 0;     // optimizer steps it ran (warm-up + timed)
  double setup_s = 0.0;  // building its setup: the run's own setup costs as much again
  ResizeStepCosts resize;  // --resize-min: costs.step_s is the full side's; this adds --resize-min's, timed ~2 s
  std::string amp;       // the precision (--amp) of the fastest steps timed: the one the run trains in
  std::vector<std::pair<std::string, double>> amp_step_s;  // each precision timed and its seconds per step
};

/// A few warm-up steps, then timed steps (until ~3 s or 20 steps), one timed evaluation pass over
/// `data.test` and, with --checkpoint-dir, one timed checkpoint write (removed again), all on a setup of
/// their own that is thrown away. With `amps` (perf_auto_amp_candidates) the steps are timed in each
/// precision, on a setup each, and the rest is measured in the fastest. With `evaluations`, its evaluation
/// and checkpoint costs are taken instead of timed again (the short run's model: short_run.h).
Calibration budget_calibrate(const TrainConfig& config, const DatasetSplits& data, c10::Device device,
                             const std::vector<std::string>& amps = {}, const Calibration* evaluations = nullptr);

/// A budgeted run's plan over its life: made once after calibration, re-made when the projected end (the
/// elapsed time, then the remaining steps, evaluations and checkpoints at the costs seen) passes the budget,
/// or at an epoch end when it leaves 1% more steps' time unused.
/// Off (seconds 0): every call is a no-op and config passes unchanged.
class RunBudget {
 public:
  using CostsHook = BudgetCostsHook;

  RunBudget(double seconds, bool announce) : seconds_(seconds), announce_(announce) {}
  bool on() const { return seconds_ > 0; }

  /// Calibrates, plans and returns `config` with the plan's --epochs and --max-steps (and, given `amps`,
  /// the faster precision's --amp; where few epochs fit, the short run's settings: short_run.h). `started`: when the run began (loading counts against the budget).
  /// Throws InputError when not even one epoch fits.
  TrainConfig plan(const TrainConfig& config, const DatasetSplits& data, c10::Device device,
                   Clock::time_point started, const CostsHook& hook = {}, const std::vector<std::string>& amps = {});

  /// After each step, `trained_s` seconds of steps so far (evaluations excluded) and `elapsed_s` since the
  /// start: when a check window closes (at least 4 steps and 2% of the budget: BudgetStepWindows), re-plans
  /// the remaining steps if the projected end passes the budget. A slow-down is caught within two windows,
  /// mid-epoch as well; one slow window (a hiccup) moves no plan. In the plan's last epoch, where no epoch end
  /// is left, a window may also stretch the run as epoch_end does. Returns the new total of steps, or 0 when
  /// the plan stands.
  int64_t step_done(int64_t step, double trained_s, double elapsed_s, const CostsHook& hook = {});

  /// At an epoch end (its evaluation and checkpoint done), with `eval_s` of its evaluation (0: the plan
  /// evaluates at another epoch's end): the same check with the windows' step cost and the smaller of the
  /// last two evaluations' costs; and, when the plan stands, a stretch: if the slower of the last two
  /// windows (and of the run's mean step) and evaluations leave room for 1% more steps within the budget
  /// less its margin (2% once re-planned) and 10% of the remaining steps' time (calibration over-estimated the
  /// step, or the host sped up), the remaining steps are re-planned up, keeping 2% free instead of the margin,
  /// and the schedule stretched to end with them. Returns the new total, or 0.
  int64_t epoch_end(int64_t step, double eval_s, double elapsed_s, const CostsHook& hook = {});

  const BudgetPlan& current() const { return plan_; }
  bool replanned() const { return !replans_.empty(); }
  const std::string& plan_json() const { return first_json_; }        // the first plan
  const std::string& last_replan_json() const { return replans_.back(); }
  /// {"plan": ..., "replans": [...], "replayable": bool}: the metrics line's and the checkpoint's record.
  std::string json() const;

 private:
  double seconds_;
  bool announce_;
  BudgetRequest request_;
  bool evals_chosen_ = false;  // the plan chose the evaluations before the last (no --eval-every, --keep-best)
  BudgetCosts costs_;
  BudgetPlan plan_;
  std::string first_json_;
  std::vector<std::string> replans_;  // each re-plan's JSON
  BudgetStepWindows windows_;         // the step cost checks project with (per full-size step)
  ResizeCostModel resize_;            // --resize-min: the windows' work and the remaining steps' mean cost
  double last_eval_s_ = 0.0;          // the last two evaluations' seconds (at first the calibration's)
  double previous_eval_s_ = 0.0;
  /// The evaluation cost checks project with: the smaller of the last two (as with steps, one slow
  /// evaluation, the first one's warm-up or a hiccup, is not projected onto the rest).
  double seen_eval_s() const { return std::min(last_eval_s_, previous_eval_s_); }

  /// The costs and plan from a calibration of `config` (its requests), with the check windows they start.
  void plan_from(const Calibration& calibration, const TrainConfig& config, Clock::time_point started,
                 const CostsHook& hook);
  BudgetCosts costs_seen(double step_s, double eval_s, double elapsed_s) const;
  int64_t replan_if_late(int64_t step, double step_s, double eval_s, double elapsed_s);
  int64_t stretch_if_early(int64_t step, double step_s, double eval_s, double elapsed_s);
  /// Makes `next` the plan, recorded with the step, the projected end it replaces and why ("late", "early").
  int64_t adopt(const BudgetPlan& next, const BudgetCosts& seen, int64_t step, double projected_s, const char* why);
};

} // namespace fastloop
