// --time-budget in a run (budget_calibrate.h): the calibration on a throw-away setup (train_setup seeds
// the weights, and the loader and mixup draw from the run's seed and step, so the planned run that follows
// trains exactly as a run given its --epochs and --max-steps), the plan and its re-plans.
#include "fastloop/train/budget_calibrate.h"

#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/cycle.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/short_run.h"
#include "fastloop/train/tta.h"

#include <nlohmann/json.hpp>

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
// Of the budget, kept free for a noisy machine (9 s of 300 s): the runs of the default recipe on a 2-core
// Xeon ended 8 s before to 3 s after their planned end, and a slow-down past the budget itself re-plans.
constexpr double kMargin = 0.03;
// Re-plan check windows: at least this many steps and this share of the budget in seconds of steps (6 s
// of 300 s, 0.12 s of 6 s), so one slow step is averaged with others and a slow-down is caught in ~4%.
constexpr int64_t kCheckSteps = 4;
constexpr double kCheckShare = 0.02;
// A run projected to end early is stretched (at an epoch end) when the costs seen allow kStretchShare more steps,
// keeping free a margin (kMargin until re-planned, so one as fast as planned stays replayable; then
// kStretchMargin, also how far it stretches: it projects the run's own costs) and kStretchNoise of the remaining
// steps' time (the Xeon's host speed moved ±10% between windows). With kMargin only, the 2-core EPYC's runs
// ended 8.8-13.8 s before the budget, within 1.5 s of their last stretch's plan or without a later 1% in 3%.
constexpr double kStretchShare = 0.01;
constexpr double kStretchNoise = 0.10;
constexpr double kStretchMargin = 0.02;

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

/// The plan's JSON with --resize-min's step costs: "resize": {"min_side": 16, ..., "mean_factor": 0.62}.
std::string resize_plan_json(const std::string& plan_json, const ResizeCostModel& resize) {
  nlohmann::ordered_json plan = nlohmann::ordered_json::parse(plan_json);
  plan["resize"] = nlohmann::ordered_json::parse(resize.json());
  return plan.dump();
}

/// The plan's JSON with the short run's record: "short_run": {"recipe_epochs": 2.6, "flags": "--pool-before-bn"}.
std::string short_run_json(const std::string& plan_json, double recipe_epochs) {
  nlohmann::ordered_json plan = nlohmann::ordered_json::parse(plan_json);
  plan["short_run"]["recipe_epochs"] = recipe_epochs;
  plan["short_run"]["flags"] = short_run_flags().substr(1);
  return plan.dump();
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

/// The plan's JSON with the precisions timed: "amp": {"chosen": "off", "step_s": {"bf16": 0.13, "off": 0.10}}.
std::string amp_choice_json(const std::string& plan_json, const Calibration& calibration) {
  nlohmann::ordered_json plan = nlohmann::ordered_json::parse(plan_json);
  plan["amp"]["chosen"] = calibration.amp;
  for (const auto& [amp, step_s] : calibration.amp_step_s) plan["amp"]["step_s"][amp] = step_s;
  return plan.dump();
}

/// "perf auto: amp off: its steps were the faster in calibration (bf16 131 ms, off 104 ms)".
std::string amp_choice_line(const Calibration& calibration) {
  std::string timed;
  for (const auto& [amp, step_s] : calibration.amp_step_s)
    timed += (timed.empty() ? "" : ", ") + amp + " " + seconds_text(step_s);
  return "perf auto: amp " + calibration.amp + ": its steps were the faster in calibration (" + timed + ")";
}

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

void RunBudget::plan_from(const Calibration& calibration, const TrainConfig& config, Clock::time_point started,
                          const CostsHook& hook) {
  BudgetCosts measured = calibration.costs;
  measured.step_s = calibration.resize.planned_step_s();  // --resize-min: the mean over its schedule
  measured.spent_s = seconds_since(started) + calibration.setup_s;  // the run's own setup is still to come
  costs_ = hook ? hook(measured, 0) : measured;
  request_.budget_s = seconds_;
  request_.margin = kMargin;
  request_.steps_per_epoch = calibration.steps_per_epoch;
  request_.checkpoints = !config.run.checkpoint_dir.empty();
  request_.checkpoint_every = config.run.checkpoint_every;
  // Evaluations as --eval-every asks, every epoch for --keep-best (it ranks each epoch's), else as planned.
  request_.eval_every = config.run.eval_every > 0 ? config.run.eval_every : config.run.keep_best > 0 ? 1 : 0;
  evals_chosen_ = request_.eval_every == 0;
  plan_ = budget_plan(costs_, request_);
  request_.eval_every = plan_.eval_every;  // re-plans keep the evaluations' epochs
  resize_ = ResizeCostModel(calibration.resize, plan_.steps);
  windows_ = BudgetStepWindows(resize_.full_step_s(costs_.step_s), kCheckSteps, kCheckShare * seconds_);
  last_eval_s_ = previous_eval_s_ = costs_.eval_s;
}

TrainConfig RunBudget::plan(const TrainConfig& config, const DatasetSplits& data, c10::Device device,
                            Clock::time_point started, const CostsHook& hook, const std::vector<std::string>& amps) {
  if (!on()) return config;
  TrainConfig chosen = config;
  Calibration calibration = budget_calibrate(chosen, data, device, amps);
  plan_from(calibration, chosen, started, hook);
  const double recipe_epochs = plan_.epochs_exact();
  const bool short_run = short_run_applies(config, recipe_epochs);
  if (short_run) {  // a slow machine: the cheaper epochs timed and planned instead
    if (announce_) std::printf("%s\n", short_run_line(recipe_epochs).c_str());
    chosen = short_run_config(config);
    const Calibration recipe = calibration;  // its evaluation and checkpoint costs stand: 9 s less calibration
    calibration = budget_calibrate(chosen, data, device, amps, &recipe);
    plan_from(calibration, chosen, started, hook);
  }
  first_json_ = budget_plan_json(plan_, costs_);
  std::string line = budget_plan_line(plan_, costs_);
  if (calibration.amp_step_s.size() > 1) {
    first_json_ = amp_choice_json(first_json_, calibration);
    if (calibration.amp != config.perf.amp) line += " --amp " + calibration.amp;  // perf auto would choose again
    if (announce_) std::printf("%s\n", amp_choice_line(calibration).c_str());
  }
  if (short_run) first_json_ = short_run_json(first_json_, recipe_epochs), line += short_run_flags();
  if (resize_.on()) first_json_ = resize_plan_json(first_json_, resize_), line += resize_.text();
  if (announce_) std::printf("%s\n", line.c_str()), std::fflush(stdout);
  TrainConfig planned = chosen;
  planned.run.epochs = plan_.epochs;
  planned.run.max_steps = plan_.steps;
  planned.run.eval_every = plan_.eval_every;
  planned.perf.amp = calibration.amp;
  return planned;
}

int64_t RunBudget::step_done(int64_t step, double trained_s, double elapsed_s, const CostsHook& hook) {
  if (!on()) return 0;
  BudgetCosts clocks = costs_;
  clocks.trained_s = trained_s, clocks.spent_s = elapsed_s;
  if (hook) clocks = hook(clocks, step);
  if (!windows_.step_done(step, clocks.trained_s, resize_.work(step))) return 0;
  const int64_t late =
      replan_if_late(step, resize_.step_s_after(step, windows_.step_s()), seen_eval_s(), clocks.spent_s);
  if (late > 0) return late;
  // Early, in the last epoch: no epoch end is left to stretch at (a run of 2.6 epochs has two, and one that sped
  // up after the second ended 27 s early on a 2-core EPYC), so each check window may stretch it.
  if (step / std::max<int64_t>(1, request_.steps_per_epoch) < plan_.epochs - 1) return 0;
  const double slower_eval_s = std::max(last_eval_s_, previous_eval_s_);
  return stretch_if_early(step, resize_.step_s_after(step, windows_.step_s_high()), slower_eval_s, clocks.spent_s);
}

int64_t RunBudget::epoch_end(int64_t step, double eval_s, double elapsed_s, const CostsHook& hook) {
  if (!on()) return 0;
  BudgetCosts clocks = costs_;
  clocks.eval_s = eval_s, clocks.spent_s = elapsed_s;
  if (hook) clocks = hook(clocks, step);
  if (clocks.eval_s > 0) previous_eval_s_ = last_eval_s_, last_eval_s_ = clocks.eval_s;  // 0: not evaluated
  // The windows measure seconds per full-size step (--resize-min), projected with what is left of its schedule.
  const int64_t late =
      replan_if_late(step, resize_.step_s_after(step, windows_.step_s()), seen_eval_s(), clocks.spent_s);
  if (late > 0) return late;
  // Early: stretched once an epoch at most, with the slower of the last two windows (and of the run's mean
  // step) and of the last two evaluations.
  const double slower_eval_s = std::max(last_eval_s_, previous_eval_s_);
  return stretch_if_early(step, resize_.step_s_after(step, windows_.step_s_high()), slower_eval_s, clocks.spent_s);
}

BudgetCosts RunBudget::costs_seen(double step_s, double eval_s, double elapsed_s) const {
  BudgetCosts seen = costs_;
  if (step_s > 0) seen.step_s = step_s;
  if (eval_s > 0 && costs_.eval_s > 0) seen.final_eval_s = costs_.final_eval_s * eval_s / costs_.eval_s;
  if (eval_s > 0) seen.eval_s = eval_s;
  seen.spent_s = elapsed_s;
  return seen;
}

int64_t RunBudget::replan_if_late(int64_t step, double step_s, double eval_s, double elapsed_s) {
  if (!on() || step >= plan_.steps) return 0;
  const BudgetCosts seen = costs_seen(step_s, eval_s, elapsed_s);
  BudgetRequest request = request_;
  request.done_steps = step;
  if (!budget_replan_needed(plan_, seen, request)) return 0;
  const double projected_s = budget_cost(seen, request, plan_.steps);
  const BudgetPlan next = budget_plan(seen, request);
  if (next.steps >= plan_.steps) return 0;
  if (announce_)
    std::printf("re-plan at step %lld: the projected end %.0f s passes the %.0f s budget (steps now %.3g ms); "
                "%lld steps in all instead of %lld, the schedule compressed to end with them (this run is not "
                "replayable by --max-steps alone)\n",
                static_cast<long long>(step), projected_s, seconds_, 1e3 * seen.step_s,
                static_cast<long long>(next.steps), static_cast<long long>(plan_.steps)),
        std::fflush(stdout);
  return adopt(next, seen, step, projected_s, "late");
}

int64_t RunBudget::stretch_if_early(int64_t step, double step_s, double eval_s, double elapsed_s) {
  if (!on() || step >= plan_.steps) return 0;
  const BudgetCosts seen = costs_seen(step_s, eval_s, elapsed_s);
  BudgetRequest request = request_;
  request.done_steps = step;
  const double remaining_s = static_cast<double>(plan_.steps - step) * seen.step_s;
  // Whether (kMargin until re-planned: a run as fast as planned stays replayable), then how far (kStretchMargin).
  const double judged = replans_.empty() ? kMargin : kStretchMargin;
  request.margin = budget_stretch_margin(judged, kStretchNoise, remaining_s, seconds_);
  const double projected_s = budget_cost(seen, request, plan_.steps);
  if (!budget_stretch_pays(plan_, budget_plan(seen, request), kStretchShare)) {
    // Past the planned epochs' end, the evaluations the plan chose would add one at that epoch end; without
    // those still to come before the last the stretch may pay (one core of the 2-core EPYC ended 17 s early
    // at the end of its 2 planned epochs, the third's evaluation not fitting). Asked for: kept.
    if (!evals_chosen_) return 0;
    request.eval_every = std::numeric_limits<int32_t>::max();
    if (!budget_stretch_pays(plan_, budget_plan(seen, request), kStretchShare)) return 0;
  }
  request.margin = budget_stretch_margin(kStretchMargin, kStretchNoise, remaining_s, seconds_);
  BudgetPlan next = budget_plan(seen, request);
  if (request.eval_every != request_.eval_every) {
    next.eval_every = std::max<int64_t>(1, next.epochs);  // the same: no epoch end before the last evaluates
    request_.eval_every = next.eval_every;
  }
  if (announce_)
    std::printf("re-plan at step %lld: the projected end %.0f s leaves %.0f s of the %.0f s budget unused (steps "
                "now %.3g ms); %lld steps in all instead of %lld, the schedule stretched to end with them (this run "
                "is not replayable by --max-steps alone)\n",
                static_cast<long long>(step), projected_s, seconds_ - projected_s, seconds_, 1e3 * seen.step_s,
                static_cast<long long>(next.steps), static_cast<long long>(plan_.steps)),
        std::fflush(stdout);
  return adopt(next, seen, step, projected_s, "early");
}

int64_t RunBudget::adopt(const BudgetPlan& next, const BudgetCosts& seen, int64_t step, double projected_s,
                         const char* why) {
  nlohmann::ordered_json record = nlohmann::ordered_json::parse(budget_plan_json(next, seen));
  record["at_step"] = step;
  record["projected_s"] = projected_s;
  record["why"] = why;
  replans_.push_back(record.dump());
  resize_.replan(step, next.steps);  // as the trainer's TrainCycle::replan
  plan_ = next;
  costs_ = seen;
  return next.steps;
}

std::string RunBudget::json() const {
  if (!on()) return "";
  nlohmann::ordered_json out;
  out["plan"] = nlohmann::ordered_json::parse(first_json_);
  out["replans"] = nlohmann::json::array();
  for (const auto& replan : replans_) out["replans"].push_back(nlohmann::ordered_json::parse(replan));
  out["replayable"] = replans_.empty();  // a re-planned run's schedule depended on the clock
  return out.dump();
}

} // namespace fastloop
