// Budgeted training's arithmetic (budget_plan.h): the cost of a run of N steps as the training loop runs
// it (an evaluation at every eval_every-th epoch end and after the last step, a checkpoint at each epoch
// end), the largest N whose cost fits the budget less its margin, found by bisection (the cost never falls
// as N grows), how often the plan evaluates, and the check windows' step cost.
#include "fastloop/train/budget_plan.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace fastloop {

namespace {

/// 2310 -> "2,310".
std::string thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

/// Epoch ends after the request's done steps and before the last step, and the evaluations among them.
struct EpochEnds {
  int64_t all = 0, evaluated = 0;
};

EpochEnds epoch_ends_of(const BudgetRequest& request, int64_t steps) {
  const int64_t done = request.done_steps / request.steps_per_epoch;
  const int64_t last = (steps - 1) / request.steps_per_epoch;
  return {last - done, last / request.eval_every - done / request.eval_every};
}

/// The step counts after which a run of `steps` evaluates: the evaluated epoch ends, then the final one.
std::vector<int64_t> eval_steps_of(const BudgetRequest& request, int64_t steps) {
  const int64_t per_epoch = request.steps_per_epoch, every = request.eval_every;
  std::vector<int64_t> out;
  for (int64_t epoch = (request.done_steps / per_epoch / every + 1) * every; epoch * per_epoch < steps; epoch += every)
    out.push_back(epoch * per_epoch);
  out.push_back(steps);
  return out;
}

/// A checkpoint at each epoch end and after the last step, and every --checkpoint-every steps.
int64_t checkpoints_of(const BudgetRequest& request, int64_t steps) {
  if (!request.checkpoints) return 0;
  const int64_t every = request.checkpoint_every;
  return epoch_ends_of(request, steps).all + 1 + (every > 0 ? steps / every - request.done_steps / every : 0);
}

/// The largest N whose run fits `target`, with the request's eval_every (>= 1).
int64_t steps_fitting(const BudgetCosts& costs, const BudgetRequest& request, int64_t least, double target) {
  // The cost rises with the steps: bisect between `least` and the N of no evaluations or checkpoints.
  int64_t fits = least;
  int64_t beyond = request.done_steps + static_cast<int64_t>(std::max(0.0, target - costs.spent_s) / costs.step_s) + 2;
  beyond = std::max(std::min<int64_t>(beyond, int64_t{1} << 50), least + 1);
  while (beyond - fits > 1) {
    const int64_t mid = fits + (beyond - fits) / 2;
    (budget_cost(costs, request, mid) <= target ? fits : beyond) = mid;
  }
  return fits;
}

}  // namespace

double duration_parse(const std::string& text, const std::string& flag) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  const std::string unit = end == begin ? "?" : std::string(end);
  const double scale = unit.empty() || unit == "s" ? 1.0 : unit == "m" ? 60.0 : unit == "h" ? 3600.0 : 0.0;
  if (scale == 0.0 || !std::isfinite(value) || value <= 0)
    throw InputError(flag + " " + text + ": not a duration; give seconds, minutes or hours, e.g. 300s, 5m, 2h");
  return value * scale;
}

double BudgetPlan::epochs_exact() const {
  return steps_per_epoch > 0 ? static_cast<double>(steps) / static_cast<double>(steps_per_epoch) : 0.0;
}

double budget_cost(const BudgetCosts& costs, const BudgetRequest& request, int64_t steps) {
  const EpochEnds ends = epoch_ends_of(request, steps);
  return costs.spent_s + static_cast<double>(steps - request.done_steps) * costs.step_s +
         static_cast<double>(ends.evaluated) * costs.eval_s + costs.final_eval_s +
         static_cast<double>(checkpoints_of(request, steps)) * costs.checkpoint_s;
}

int64_t budget_eval_every(const BudgetCosts& costs, const BudgetRequest& request) {
  if (request.eval_every > 0) return request.eval_every;
  if (costs.eval_s <= 0) return 1;
  BudgetRequest longest = request;
  longest.eval_every = std::numeric_limits<int64_t>::max();  // no evaluation before the last
  const double target = request.budget_s * (1.0 - request.margin);
  const int64_t least = request.done_steps > 0 ? request.done_steps + 1 : request.steps_per_epoch;
  const int64_t ends = epoch_ends_of(longest, steps_fitting(costs, longest, least, target)).all;
  const auto fitting = static_cast<int64_t>(std::floor(request.eval_share * request.budget_s / costs.eval_s));
  if (fitting >= ends) return 1;
  return fitting > 0 ? (ends + fitting - 1) / fitting : ends + 1;
}

BudgetPlan budget_plan(const BudgetCosts& costs, const BudgetRequest& asked) {
  if (asked.steps_per_epoch < 1 || costs.step_s <= 0 || asked.budget_s <= 0 || asked.margin < 0 ||
      asked.margin >= 1 || asked.eval_every < 0)
    throw InputError("budget_plan: steps per epoch, step seconds and the budget must be > 0, the margin in [0, 1), "
                     "eval_every >= 0");
  BudgetRequest request = asked;
  request.eval_every = budget_eval_every(costs, asked);
  const double target = request.budget_s * (1.0 - request.margin);
  const int64_t per_epoch = request.steps_per_epoch;
  const int64_t least = request.done_steps > 0 ? request.done_steps + 1 : per_epoch;
  if (request.done_steps == 0 && budget_cost(costs, request, least) > target) {
    const double smallest = std::ceil(budget_cost(costs, request, least) / (1.0 - request.margin));
    char message[512];
    std::snprintf(message, sizeof(message),
                  "--time-budget %.0f s is too small for one epoch: measured %s per step x %lld steps + an "
                  "evaluation of %s + %s of loading and calibration%s; give at least %.0fs (with the %.0f%% "
                  "margin), or --epochs/--max-steps",
                  request.budget_s, seconds_text(costs.step_s).c_str(), static_cast<long long>(per_epoch),
                  seconds_text(costs.final_eval_s).c_str(), seconds_text(costs.spent_s).c_str(),
                  request.checkpoints ? (" + a checkpoint of " + seconds_text(costs.checkpoint_s)).c_str() : "",
                  smallest, 100.0 * request.margin);
    throw InputError(message);
  }
  BudgetPlan plan;
  plan.steps = steps_fitting(costs, request, least, target);
  plan.steps_per_epoch = per_epoch;
  plan.epochs = (plan.steps + per_epoch - 1) / per_epoch;
  plan.eval_every = request.eval_every;
  plan.eval_steps = eval_steps_of(request, plan.steps);
  plan.evals = static_cast<int64_t>(plan.eval_steps.size());
  plan.checkpoints = checkpoints_of(request, plan.steps);
  plan.planned_s = budget_cost(costs, request, plan.steps);
  plan.budget_s = request.budget_s;
  plan.margin_s = request.budget_s * request.margin;
  return plan;
}

BudgetStepWindows::BudgetStepWindows(double planned_step_s, int64_t min_steps, double min_s)
    : min_steps_(std::max<int64_t>(1, min_steps)), min_s_(min_s), last_s_(planned_step_s),
      previous_s_(planned_step_s) {}

bool BudgetStepWindows::step_done(int64_t step, double trained_s, double work) {
  now_s_ = trained_s, now_work_ = work;
  if (open_step_ < 0) {
    open_step_ = step, open_s_ = trained_s, open_work_ = work;
    starts_.assign(1, {trained_s, work});
    return false;
  }
  const double seconds = trained_s - open_s_;
  if (step - open_step_ < min_steps_ || seconds < min_s_ || work <= open_work_) return false;
  previous_s_ = last_s_;
  last_s_ = seconds / (work - open_work_);
  if (closed_++ > 0) starts_.emplace_back(open_s_, open_work_);  // the first window began at the first call
  while (static_cast<int>(starts_.size()) > kMeanWindows) starts_.pop_front();
  open_step_ = step, open_s_ = trained_s, open_work_ = work;
  return true;
}

double BudgetStepWindows::step_s() const { return std::min(last_s_, previous_s_); }

double BudgetStepWindows::step_s_high() const { return std::max({last_s_, previous_s_, mean_s()}); }

double BudgetStepWindows::mean_s() const {
  if (starts_.empty() || now_work_ <= starts_.front().second) return previous_s_;
  return (now_s_ - starts_.front().first) / (now_work_ - starts_.front().second);
}

bool budget_replan_needed(const BudgetPlan& plan, const BudgetCosts& costs, const BudgetRequest& request) {
  return plan.steps > request.done_steps && budget_cost(costs, request, plan.steps) > request.budget_s;
}

bool budget_stretch_pays(const BudgetPlan& plan, const BudgetPlan& stretched, double share) {
  return static_cast<double>(stretched.steps) >= static_cast<double>(plan.steps) * (1.0 + share);
}

double budget_stretch_margin(double margin, double noise, double remaining_s, double budget_s) {
  return std::min(0.9, margin + noise * std::max(0.0, remaining_s) / budget_s);
}

std::string seconds_text(double s) {
  char text[32];
  if (s < 1.0) std::snprintf(text, sizeof(text), "%.3g ms", 1e3 * s);
  else if (s < 10.0) std::snprintf(text, sizeof(text), "%.1f s", s);
  else std::snprintf(text, sizeof(text), "%.0f s", s);
  return text;
}

namespace {

/// The plan line's words on its evaluations: " (every 2 epochs and after the last step, the last with TTA: 3.7 s)".
std::string evals_text(const BudgetPlan& plan, const BudgetCosts& costs) {
  std::string when;
  if (plan.evals == 1) when = "after the last step only";
  else if (plan.eval_every > 1) when = "every " + std::to_string(plan.eval_every) + " epochs and after the last step";
  const std::string tta =
      costs.final_eval_s > costs.eval_s * 1.05 ? "the last with TTA: " + seconds_text(costs.final_eval_s) : "";
  if (when.empty() && tta.empty()) return "";
  return " (" + when + (when.empty() || tta.empty() ? "" : ", ") + tta + ")";
}

}  // namespace

std::string budget_plan_line(const BudgetPlan& plan, const BudgetCosts& costs) {
  char epochs[32];
  std::snprintf(epochs, sizeof(epochs), "%.1f", plan.epochs_exact());
  std::string line = "plan: " + thousands(plan.steps) + " steps (" + epochs + " epochs) of " +
                     seconds_text(costs.step_s) + " + " + std::to_string(plan.evals) + " evals of " +
                     seconds_text(costs.eval_s) + evals_text(plan, costs);
  if (plan.checkpoints > 0)
    line += " + " + std::to_string(plan.checkpoints) + " checkpoints of " + seconds_text(costs.checkpoint_s);
  line += " + " + seconds_text(costs.spent_s) + " loading and calibration = " + seconds_text(plan.planned_s) +
          " of " + seconds_text(plan.budget_s) + " (" + seconds_text(plan.margin_s) + " kept free); replay: --epochs " +
          std::to_string(plan.epochs) + " --max-steps " + std::to_string(plan.steps);
  if (plan.eval_every > 1) line += " --eval-every " + std::to_string(plan.eval_every);
  return line;
}

std::string budget_plan_json(const BudgetPlan& plan, const BudgetCosts& costs) {
  nlohmann::ordered_json out;
  out["steps"] = plan.steps;
  out["epochs"] = plan.epochs;
  out["steps_per_epoch"] = plan.steps_per_epoch;
  out["evals"] = plan.evals;
  out["eval_every"] = plan.eval_every;
  out["eval_steps"] = plan.eval_steps;
  out["checkpoints"] = plan.checkpoints;
  out["planned_s"] = plan.planned_s;
  out["budget_s"] = plan.budget_s;
  out["margin_s"] = plan.margin_s;
  out["step_s"] = costs.step_s;
  out["eval_s"] = costs.eval_s;
  out["final_eval_s"] = costs.final_eval_s;
  out["checkpoint_s"] = costs.checkpoint_s;
  out["spent_s"] = costs.spent_s;
  return out.dump();
}

double schedule_warp(double step, int64_t from, int64_t old_total, int64_t new_total) {
  if (step < static_cast<double>(from) || new_total == old_total) return step;
  const double old_span = static_cast<double>(old_total - 1 - from);
  const double new_span = static_cast<double>(new_total - 1 - from);
  if (new_span <= 0) return static_cast<double>(old_total - 1);  // one step left: the schedule's last
  return static_cast<double>(from) + (step - static_cast<double>(from)) * old_span / new_span;
}

} // namespace fastloop
