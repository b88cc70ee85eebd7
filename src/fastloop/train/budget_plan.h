// Budgeted training's arithmetic as pure functions (no clock, no model): a duration parsed, a run planned
// from measured costs so that its steps, every evaluation and the checkpoints end within a time budget,
// the step cost re-plan checks project with, the plan re-made from the costs seen so far, and the
// schedule's clock warped onto a re-planned length.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// A duration as `--time-budget` takes it: a number of seconds with an optional unit, `300s`, `5m`,
/// `2h`, `90` (seconds). Throws InputError naming `flag` when it is not one or not > 0.
double duration_parse(const std::string& text, const std::string& flag = "--time-budget");

/// What one run costs on this machine, in seconds, as calibration measured it (or a re-plan saw it).
struct BudgetCosts {
  double step_s = 0.0;        // one optimizer step, loader wait included
  double eval_s = 0.0;        // one evaluation pass over the test split (per-epoch, without TTA)
  double final_eval_s = 0.0;  // the final evaluation (with --tta: its extra forward passes)
  double checkpoint_s = 0.0;  // one checkpoint write; 0 without --checkpoint-dir
  double spent_s = 0.0;       // already gone before the planned steps: data loading, setup, calibration
  double trained_s = 0.0;     // re-plan checks: seconds of the steps run so far (evaluations excluded)
};

/// Tests inject costs and clocks through this. At the plan (done_steps 0): called with the costs measured,
/// returns the costs to plan with. After each step and at each epoch end: called with the run's clocks
/// (spent_s: seconds since the run began, trained_s: seconds of its steps) and, at an epoch end, eval_s of
/// its evaluation; returns those to check with (the checks derive the step cost from trained_s).
using BudgetCostsHook = std::function<BudgetCosts(const BudgetCosts& measured, int64_t done_steps)>;

/// The run a plan is for.
struct BudgetRequest {
  double budget_s = 0.0;           // the whole run: loading, calibration, training, evaluations, checkpoints
  double margin = 0.05;            // fraction of the budget kept free for noise (0.05: 15 s of 300 s)
  int64_t steps_per_epoch = 0;     // optimizer steps of one pass over the train split
  int64_t checkpoint_every = 0;    // --checkpoint-every (0: checkpoints only at epoch ends)
  bool checkpoints = false;        // --checkpoint-dir given: a checkpoint after each epoch's evaluation
  int64_t done_steps = 0;          // re-plans: steps already run (their cost is in spent_s)
  int64_t eval_every = 1;          // epochs between the evaluations before the last; 0: the plan chooses
  double eval_share = 0.02;        // eval_every 0: the share of the budget the evaluations before the last may take
};

/// The planned run. Evaluations fall at every eval_every-th epoch end and after the last step (the last
/// one the final, with TTA), as the training loop runs them; a checkpoint at each epoch end.
struct BudgetPlan {
  int64_t steps = 0;               // optimizer steps in all (--max-steps of the replay)
  int64_t epochs = 0;              // passes the sampler starts: ceil(steps / steps_per_epoch) (--epochs)
  int64_t eval_every = 1;          // epochs between evaluations before the last (--eval-every)
  int64_t evals = 0;               // evaluations still to come (after done_steps)
  std::vector<int64_t> eval_steps; // the step count after which each of them runs
  int64_t checkpoints = 0;         // checkpoint writes still to come
  double planned_s = 0.0;          // the projected end, spent_s included
  double budget_s = 0.0;
  double margin_s = 0.0;           // seconds of the budget left free
  double epochs_exact() const;     // steps / steps_per_epoch (7.7)
  int64_t steps_per_epoch = 0;
};

/// The most steps (>= one epoch's) whose steps, evaluations and checkpoints end by budget - margin.
/// Throws InputError when not even one epoch fits, with the measured costs and the smallest budget
/// that would. With done_steps > 0 (a re-plan) at least one more step is planned, so the schedule can end.
BudgetPlan budget_plan(const BudgetCosts& costs, const BudgetRequest& request);

/// The epochs between evaluations when the request leaves them to the plan (eval_every 0): every epoch when
/// the evaluations before the last fit in `eval_share` of the budget, else every k-th epoch, the fewest k
/// whose evaluations fit (with none fitting, only the last: k one more than the epoch ends before it).
/// Counted on the longest run the budget allows (no evaluations before the last).
int64_t budget_eval_every(const BudgetCosts& costs, const BudgetRequest& request);

/// The seconds a run of `steps` costs after `request.done_steps` (evaluations, final evaluation and
/// checkpoints as the loop runs them), spent_s included.
double budget_cost(const BudgetCosts& costs, const BudgetRequest& request, int64_t steps);

/// The step cost re-plan checks project with, from the run's training clock (seconds of steps, evaluations
/// excluded). Steps are timed in windows of at least `min_steps` steps and `min_s` seconds: a window of one
/// or two steps is noise, and projected over the rest of a short run it re-plans it (a 25 ms hiccup among
/// 6 ms steps; the first step after each epoch end, which restarts the loader). A check is due when a
/// window closes; it projects with the smaller of the last two windows' costs (the planned cost stands for
/// the window before the first), so one slow window moves no plan and a slow-down is caught when it has
/// lasted two windows.
class BudgetStepWindows {
 public:
  BudgetStepWindows() = default;
  BudgetStepWindows(double planned_step_s, int64_t min_steps, double min_s);

  /// After the run's step `step`, `trained_s` seconds of steps in all: whether a window closed (a check is
  /// due). The first call opens the first window: the run's first step carried the loader's start.
  bool step_done(int64_t step, double trained_s) { return step_done(step, trained_s, static_cast<double>(step)); }

  /// The same when the steps differ in cost (--resize-min's smaller batches): `work`, the steps so far in
  /// units of the step that step_s() prices (ResizeCostModel::work); a window's cost is its seconds per work.
  bool step_done(int64_t step, double trained_s, double work);

  /// Seconds per step: the smaller of the last two windows'.
  double step_s() const;

  /// Seconds per step as a stretch projects with: the larger of the last two windows' and the mean over the
  /// last kMeanWindows windows (a plan is raised only when the slower of two windows, and the recent mean,
  /// still leave time over: one fast window on a host whose speed moves +-10% raises nothing). Recent, not the
  /// whole run's: after the steps got faster (a 2-core EPYC, 2.6 epochs) the run's mean kept a stretch made
  /// from it 27 s short of the budget.
  double step_s_high() const;

  /// Seconds per step over the last kMeanWindows closed windows and the open one (every step timed so far
  /// while fewer have closed), the planned cost before.
  double mean_s() const;

  static constexpr int kMeanWindows = 5;  // 10% of the budget at windows of 2%

 private:
  int64_t min_steps_ = 1;
  double min_s_ = 0.0;
  int64_t open_step_ = -1;  // the step and training seconds where the open window began; -1: none yet
  double open_s_ = 0.0;
  double open_work_ = 0.0;  // and its work (step_done's third argument)
  double last_s_ = 0.0;      // the last two closed windows' seconds per step
  double previous_s_ = 0.0;
  // The training seconds and work where the last kMeanWindows closed windows began, oldest first (before the
  // first closes: the first call's).
  std::deque<std::pair<double, double>> starts_;
  int64_t closed_ = 0;                       // windows closed so far
  double now_s_ = 0.0, now_work_ = 0.0;      // the last call's
};

/// Whether a run planned to `plan.steps` must be re-planned: its projected end with `costs` (as seen so
/// far, spent_s the elapsed time) passes the budget itself (the margin is used up).
bool budget_replan_needed(const BudgetPlan& plan, const BudgetCosts& costs, const BudgetRequest& request);

/// Whether a run planned to `plan.steps` may be stretched: the plan that `costs` (as seen so far) allow
/// has at least `share` more steps (0.01: 1%) than it. A run ending that much early wastes its budget
/// (calibration's few steps over-estimated the step by ~9% on one 2-core Xeon).
bool budget_stretch_pays(const BudgetPlan& plan, const BudgetPlan& stretched, double share);

/// The margin (a fraction of the budget, < 1) a stretch plans to keep free: the run's `margin` and `noise`
/// (0.1: 10%) of `remaining_s`, the seconds the steps still to come take. Made early, with most of the run
/// ahead, a stretch leaves room for the host to slow down by `noise` without a re-plan down again; made
/// near the end it takes back nearly all of the time that would go unused.
double budget_stretch_margin(double margin, double noise, double remaining_s, double budget_s);

/// One sentence: "plan: 2,310 steps (7.7 epochs) of 31 ms + 4 evals of 3.1 s + ... = 291 s of 300 s".
std::string budget_plan_line(const BudgetPlan& plan, const BudgetCosts& costs);

/// Seconds as people read them: "31 ms", "3.1 s", "291 s".
std::string seconds_text(double seconds);

/// The plan as a JSON object text (the metrics line's and the checkpoint's record).
std::string budget_plan_json(const BudgetPlan& plan, const BudgetCosts& costs);

/// A schedule re-planned at step `from` from `old_total` to `new_total` steps: the step of the old
/// schedule whose learning rate step `step` takes. Continuous at `from`; the last step maps to the last,
/// so the schedule still ends where it would have (at zero for cosine, one-cycle's floor). Steps before
/// `from` are unchanged.
double schedule_warp(double step, int64_t from, int64_t old_total, int64_t new_total);

} // namespace fastloop
