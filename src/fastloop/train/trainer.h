// The training loop of `fastloop train`: data, model, optimizer and schedule from a TrainConfig,
// then epochs of steps with, once in a while, a metric line, a checkpoint and an evaluation.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/train/budget_plan.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/metrics.h"

#include <functional>
#include <string>
#include <vector>

namespace fastloop {

struct TrainControl {
  /// Asked after every step; true saves a checkpoint (when a directory is set) and ends the run early.
  std::function<bool(const TrainPosition&)> should_stop;
  bool progress = true;   // progress bar / lines on stdout
  /// Called with every progress report (each --log-every steps, and at epoch ends and the last step).
  std::function<void(const StepReport&)> on_report;
  /// Called once the config has passed config_validate, before any work (`fastloop train` prints its
  /// choices here, so a bad flag's message is the first output).
  std::function<void(const TrainConfig&)> on_start;
  /// --time-budget: the costs to plan with instead of the measured ones (tests: a plan and its re-plans
  /// that do not depend on this machine's speed).
  BudgetCostsHook budget_costs;
  /// --time-budget: autocast precisions ("bf16", "off") whose steps the calibration times, training in the
  /// faster (perf_auto_amp_candidates); empty: the config's --amp.
  std::vector<std::string> amp_candidates;
};

struct TrainSummary {
  EvalResult test;        // evaluation after the last epoch run
  TrainPosition position; // where the run ended
  bool stopped = false;   // ended early by TrainControl::should_stop
  int64_t skipped_steps = 0;  // optimizer steps skipped for inf/nan (AMP scaler or --nan-policy skip)
  double train_seconds = 0.0;
  double elapsed_seconds = 0.0;  // from the start of train() (data loading) to the end of the final evaluation
  double img_per_s = 0.0; // training images per second, whole run, all ranks together
  std::string budget;     // --time-budget: {"plan", "replans", "replayable"} as JSON; empty without a budget
  std::string loader_state;  // where the train loader ended, as its checkpoint records it (train/loader_state.h)
  // Distributed runs (DistributedDataParallel's counters, this rank):
  int64_t world_size = 1;
  int64_t rank = 0;
  int64_t buckets = 0;        // gradient buckets
  int64_t allreduces = 0;     // bucket all-reduces: buckets x optimizer steps
  double comm_span_s = 0.0;   // seconds communication went on: per step, first bucket launch to last completion
  double comm_exposed_s = 0.0;  // of which the optimizer step waited: communication not hidden by backward
};

TrainSummary train(const TrainConfig& config, const TrainControl& control = {});

} // namespace fastloop
