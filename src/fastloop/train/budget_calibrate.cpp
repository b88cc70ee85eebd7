// --time-budget in a run (budget_calibrate.h): the calibration on a throw-away setup (train_setup seeds
// the weights, and the loader and mixup draw from the run's seed and step, so the planned run that follows
// trains exactly as a run given its --epochs and --max-steps). The plan and its re-plans: run_budget.cpp.
#include "fastloop/train/budget_calibrate.h"

#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/cycle.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/tta.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

namespace fastloop {

namespace {

constexpr int64_t kWarmupSteps = 3;     // first steps build kernels and caches: not timed
constexpr int64_t kMaxTimedSteps = 20;
constexpr double kTimedSeconds = 3.0;   // timed steps stop once they took this long (and >= 2 ran)
constexpr double kResizeTimedSeconds = 2.0;  // --resize-min's second timing, of cheaper steps

/// Forward passes of the final evaluation per per-epoch one: --tta flip 2, flip-translate 6 (tta.h).
double tta_factor(const std::string& tta) { return tta == "flip" ? 2.0 : tta == "flip-translate" ? 6.0 : 1.0; }

/// Seconds per optimizer step over the calibration's timed steps (the loader's wait included), timed
/// until `timed_s` seconds (or kMaxTimedSteps) with every batch at `side` (0: as loaded, --resize-min off).
double steps_time(TrainSetup& setup, const Dataset& train, const RunLength& length, int64_t& steps_run,
                  int64_t side = 0, double timed_s = kTimedSeconds) {
  Loader loader(train, setup.train_loader);
  TrainCycle cycles(setup, length, /*announce=*/false);
  cycles.resize_fix(side);
  setup.model->train();
  TrainPosition position;
  loader.start_epoch(position.epoch);
  Clock::time_point timed_start;
  at::Tensor loss;
  for (;;) {
    auto batch = loader.next();
    if (!batch) {  // a split of fewer batches than calibration steps: go on with the next epoch
      loader.start_epoch(++position.epoch), position.batch = 0;
      continue;
    }
    const int64_t micro = length.micro(position.batch), cycle_length = length.cycle_length(position.batch);
    loss = cycles.micro_step(*batch, position.step, micro, cycle_length);
    ++position.batch;
    if (micro + 1 < cycle_length) continue;
    cycles.optimizer_step(position);
    ++position.step;
    if (position.step == kWarmupSteps) {
      loss.item();  // the device has finished the warm-up before the clock starts
      timed_start = Clock::now();
    }
    const int64_t timed = position.step - kWarmupSteps;
    if (timed >= kMaxTimedSteps || (timed >= 2 && seconds_since(timed_start) >= timed_s)) break;
  }
  loss.item();
  const double seconds = seconds_since(timed_start);
  loader.stop();
  steps_run = position.step;
  return seconds / static_cast<double>(position.step - kWarmupSteps);
}

/// --resize-min: the full side's step cost `full_s` (calibration's timing) and a second, short one (~2 s,
/// its steps are cheap) of steps at --resize-min on the same setup; the plan models the sides between
/// (resize_cost.h). Off: no timing, every factor 1.
ResizeStepCosts resize_steps_time(TrainSetup& setup, const Dataset& train, const RunLength& length,
                                  double full_s) {
  ResizeStepCosts costs;
  costs.options = resize_options(setup.config.data);
  costs.full_side = train.height();
  costs.full_s = full_s;
  if (!costs.options.on() || costs.options.min_side >= costs.full_side) return costs;
  int64_t steps = 0;
  costs.min_s = steps_time(setup, train, length, steps, costs.options.min_side, kResizeTimedSeconds);
  return costs;
}

/// One checkpoint write into --checkpoint-dir, timed and removed; 0 when it cannot be written (the run's
/// own first save then reports why).
double checkpoint_time(TrainSetup& setup, const TrainConfig& config) {
  if (config.run.checkpoint_dir.empty()) return 0.0;
  const auto path = std::filesystem::path(config.run.checkpoint_dir) / ".budget_calibration.ckpt";
  std::error_code error;
  std::filesystem::create_directories(config.run.checkpoint_dir, error);
  const auto start = Clock::now();
  try {
    checkpoint_save(path.string(), *setup.model, setup.optimizer.get(), TrainPosition{}, config_to_json(config),
                    &setup.scaler, setup.ema ? &setup.ema->module() : nullptr, model_info_to_json(setup.info),
                    setup.lookahead.get());
  } catch (const std::exception&) {
    return 0.0;
  }
  const double seconds = seconds_since(start);
  std::filesystem::remove(path, error);
  return seconds;
}

}  // namespace

double budget_seconds(const TrainConfig& config, int64_t world_size) {
  const RunConfig& run = config.run;
  if (run.time_budget == "off" || run.max_steps > 0 || run.epochs != RunConfig{}.epochs) return 0.0;
  const double seconds = duration_parse(run.time_budget);
  if (run.resume != "off") {
    // --resume on without a checkpoint: the setup's own message says so. --resume auto without one starts fresh.
    std::error_code error;
    if (!std::filesystem::exists(checkpoint_path_in(run.checkpoint_dir), error)) return run.resume == "on" ? 0.0 : seconds;
    throw InputError("--time-budget " + run.time_budget + " with --resume " + run.resume + " and " +
                     checkpoint_path_in(run.checkpoint_dir) + ": a resumed run is not re-planned yet; give the "
                     "first run's plan (--epochs E --max-steps N, from its plan line) or --time-budget off");
  }
  if (world_size > 1)
    throw InputError("--time-budget " + run.time_budget + ": distributed runs (" + std::to_string(world_size) +
                     " ranks) are not planned yet; give --epochs or --max-steps");
  return seconds;
}

namespace {

/// A fresh setup of `config` and its steps timed (steps_time).
struct TimedSetup {
  TrainSetup setup;
  RunLength length{};
  double setup_s = 0.0, step_s = 0.0;
  int64_t steps = 0;
};

TimedSetup setup_timed(const TrainConfig& config, const Dataset& train, c10::Device device) {
  const auto setup_start = Clock::now();
  TimedSetup timed{train_setup(config, train, device, nullptr)};
  Loader sizing(train, timed.setup.train_loader);
  timed.length = run_length(config, sizing.batches_per_epoch(), train.size());
  timed.setup_s = seconds_since(setup_start);
  timed.step_s = steps_time(timed.setup, train, timed.length, timed.steps);
  return timed;
}

}  // namespace

Calibration budget_calibrate(const TrainConfig& config, const DatasetSplits& data, c10::Device device,
                             const std::vector<std::string>& amps, const Calibration* evaluations) {
  Calibration out;
  std::optional<TimedSetup> fastest;  // of the precisions timed: the one the run trains in
  for (const std::string& amp : amps.empty() ? std::vector<std::string>{config.perf.amp} : amps) {
    TrainConfig candidate = config;
    candidate.perf.amp = amp;
    TimedSetup timed = setup_timed(candidate, data.train, device);
    out.amp_step_s.emplace_back(amp, timed.step_s);
    if (!fastest || timed.step_s < fastest->step_s) fastest.emplace(std::move(timed));
  }
  TrainSetup& setup = fastest->setup;
  out.amp = setup.config.perf.amp;
  out.setup_s = fastest->setup_s;
  out.steps = fastest->steps;
  out.steps_per_epoch = fastest->length.steps_per_epoch;
  out.costs.step_s = fastest->step_s;
  out.resize = resize_steps_time(setup, data.train, fastest->length, out.costs.step_s);
  if (evaluations != nullptr) {  // timed already, on a model of the same cost per image
    out.costs.eval_s = evaluations->costs.eval_s;
    out.costs.final_eval_s = evaluations->costs.final_eval_s;
    out.costs.checkpoint_s = evaluations->costs.checkpoint_s;
    return out;
  }
  if (data.test.size() > 0) {
    EvalOptions options = setup.eval;
    options.tta = "off";
    const auto eval_start = Clock::now();
    evaluate(*setup.model, data.test, config.data.batch_size, config.data.workers, options);
    const double models = setup.ema ? 2.0 : 1.0;  // with --ema-decay both the weights and their EMA
    out.costs.eval_s = models * seconds_since(eval_start);
    out.costs.final_eval_s = out.costs.eval_s * tta_factor(tta_mode(config.data));
  }
  out.costs.checkpoint_s = checkpoint_time(setup, setup.config);
  return out;
}

} // namespace fastloop
