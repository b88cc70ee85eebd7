// --time-budget in a run: the budget a config asks for, the calibration that measures this machine's
// step, evaluation and checkpoint costs on the real model and data (on a throw-away setup, so the planned
// run starts from the same seeded state as a run without it), and RunBudget, the plan the training loop
// follows and re-makes when the machine slows down (checked ten times per epoch and at each epoch end).
#pragma once

#include "fastloop/core/clock.h"
#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/train/budget_plan.h"

#include <c10/core/Device.h>

#include <functional>
#include <string>
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
};

/// A few warm-up steps, then timed steps (until ~3 s or 20 steps), one timed evaluation pass over
/// `data.test` and, with --checkpoint-dir, one timed checkpoint write (removed again), all on a setup of
/// their own that is thrown away.
Calibration budget_calibrate(const TrainConfig& config, const DatasetSplits& data, c10::Device device);

/// A budgeted run's plan over its life: made once after calibration, re-made at epoch ends when the
/// projected end passes the budget. Off (seconds 0): every call is a no-op and config passes unchanged.
class RunBudget {
 public:
  using CostsHook = BudgetCostsHook;

  RunBudget(double seconds, bool announce) : seconds_(seconds), announce_(announce) {}
  bool on() const { return seconds_ > 0; }

  /// Calibrates, plans and returns `config` with the plan's --epochs and --max-steps. `started`: when the
  /// run began (loading counts against the budget). Throws InputError when not even one epoch fits.
  TrainConfig plan(const TrainConfig& config, const DatasetSplits& data, c10::Device device,
                   Clock::time_point started, const CostsHook& hook = {});

  /// After each step: every tenth of an epoch, with the step cost seen since the last check and
  /// `elapsed_s` since the start, re-plans the remaining steps when the projected end passes the budget (a
  /// machine that slows down mid-epoch is caught within a tenth of an epoch, not at its end). Returns the
  /// new total of steps, or 0 when the plan stands.
  int64_t step_done(int64_t step, double elapsed_s, const CostsHook& hook = {});

  /// At an epoch end (its evaluation and checkpoint done): the same with the step and evaluation costs seen
  /// in this epoch; the next check's window starts here.
  int64_t epoch_end(int64_t step, double step_s, double eval_s, double elapsed_s, const CostsHook& hook = {});

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
  BudgetCosts costs_;
  BudgetPlan plan_;
  std::string first_json_;
  std::vector<std::string> replans_;  // each re-plan's JSON
  int64_t window_step_ = -1;          // the step and time of the last check; -1: none yet
  double window_s_ = 0.0;

  int64_t replan_if_late(int64_t step, double step_s, double eval_s, double elapsed_s, const CostsHook& hook);
};

} // namespace fastloop
