// --time-budget's RunBudget (budget_calibrate.h): the plan made from a calibration (budget_calibrate.cpp), its
// check windows during the run, and the re-plans of a run projected to end late or early.
#include "fastloop/train/budget_calibrate.h"

#include "fastloop/train/short_run.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>

namespace fastloop {

namespace {

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

}  // namespace

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
