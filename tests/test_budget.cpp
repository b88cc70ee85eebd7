// --time-budget: the planner's arithmetic as pure functions (costs in, plan out: fits, exact fits, rounding,
// refusals, re-plans, the check windows, the schedule warped onto a re-planned length). Whole runs:
// test_budget_run.cpp.
#include "fastloop/core/errors.h"
#include "fastloop/train/budget_calibrate.h"
#include "fastloop/train/budget_plan.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/schedule.h"

#include "temp_dir.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

namespace fastloop {
namespace {

BudgetRequest request_of(double budget_s, int64_t steps_per_epoch, double margin = 0.05) {
  BudgetRequest request;
  request.budget_s = budget_s;
  request.steps_per_epoch = steps_per_epoch;
  request.margin = margin;
  return request;
}

std::string thrown_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(BudgetPlan, DurationParsesSecondsMinutesAndHours) {
  EXPECT_EQ(duration_parse("300s"), 300.0);
  EXPECT_EQ(duration_parse("5m"), 300.0);
  EXPECT_EQ(duration_parse("2h"), 7200.0);
  EXPECT_EQ(duration_parse("90"), 90.0);
  EXPECT_EQ(duration_parse("1.5m"), 90.0);
  for (const char* bad : {"", "m", "5x", "5 m", "-3s", "0s", "inf", "5mm"})
    EXPECT_THROW(duration_parse(bad), InputError) << bad;
  EXPECT_NE(thrown_message([] { duration_parse("5min"); }).find("--time-budget 5min: not a duration"), std::string::npos);
}

TEST(BudgetPlan, FillsTheBudgetLessItsMargin) {
  BudgetCosts costs;
  costs.step_s = 0.031, costs.eval_s = 3.1, costs.final_eval_s = 3.1, costs.spent_s = 5.0;
  const BudgetPlan plan = budget_plan(costs, request_of(300, 300));
  EXPECT_EQ(plan.steps, 6732);   // 5 + 6,732 x 0.031 + 23 x 3.1 = 284.99 s <= 285 s; one step more is 285.02 s
  EXPECT_EQ(plan.epochs, 23);    // 22.44 epochs: the sampler starts 23
  EXPECT_EQ(plan.evals, 23);
  ASSERT_EQ(plan.eval_steps.size(), 23u);
  EXPECT_EQ(plan.eval_steps.front(), 300);
  EXPECT_EQ(plan.eval_steps[21], 6600);
  EXPECT_EQ(plan.eval_steps.back(), 6732);  // the final evaluation, after the last (partial) epoch
  EXPECT_NEAR(plan.epochs_exact(), 22.44, 1e-9);
  EXPECT_LE(plan.planned_s, 285.0);
  EXPECT_GT(budget_cost(costs, request_of(300, 300), plan.steps + 1), 285.0);
  EXPECT_EQ(plan.margin_s, 15.0);
}

TEST(BudgetPlan, CountsTheFinalTtaEvaluationAndCheckpoints) {
  BudgetCosts costs;
  costs.step_s = 0.031, costs.eval_s = 3.1, costs.final_eval_s = 6.2, costs.checkpoint_s = 0.25, costs.spent_s = 5.0;
  BudgetRequest request = request_of(300, 300);
  request.checkpoints = true, request.checkpoint_every = 1000;
  const BudgetPlan plan = budget_plan(costs, request);
  EXPECT_EQ(plan.steps, 6506);
  EXPECT_EQ(plan.epochs, 22);
  EXPECT_EQ(plan.checkpoints, 22 + 6);  // one per evaluation, one per 1,000 steps
  EXPECT_LE(plan.planned_s, 285.0);
}

TEST(BudgetPlan, AnExactFitTakesItsLastStepAndRoundsEpochsUp) {
  BudgetCosts costs;  // binary-exact costs: 20 steps x 0.5 s + 2 evaluations x 1 s = 12 s
  costs.step_s = 0.5, costs.eval_s = 1.0, costs.final_eval_s = 1.0;
  BudgetPlan plan = budget_plan(costs, request_of(12, 10, 0.0));
  EXPECT_EQ(plan.steps, 20);
  EXPECT_EQ(plan.epochs, 2);
  EXPECT_EQ(plan.planned_s, 12.0);
  plan = budget_plan(costs, request_of(11.9, 10, 0.0));  // 19 steps: the second epoch cut, still evaluated
  EXPECT_EQ(plan.steps, 19);
  EXPECT_EQ(plan.epochs, 2);
  EXPECT_EQ(plan.eval_steps, (std::vector<int64_t>{10, 19}));
  plan = budget_plan(costs, request_of(12.5, 10, 0.0));  // 21 steps would need a third evaluation: 13.5 s
  EXPECT_EQ(plan.steps, 20);
}

TEST(BudgetPlan, RefusesABudgetShorterThanOneEpochWithTheSmallestThatFits) {
  BudgetCosts costs;
  costs.step_s = 0.5, costs.eval_s = 2.0, costs.final_eval_s = 2.0, costs.spent_s = 3.0;
  // One epoch: 3 + 100 x 0.5 + 2 = 55 s, with the 5% margin 57.9 s: the smallest budget is 58 s.
  const std::string message = thrown_message([&] { budget_plan(costs, request_of(57, 100)); });
  EXPECT_NE(message.find("--time-budget 57 s is too small for one epoch"), std::string::npos) << message;
  EXPECT_NE(message.find("500 ms per step x 100 steps"), std::string::npos) << message;
  EXPECT_NE(message.find("give at least 58s"), std::string::npos) << message;
  EXPECT_EQ(budget_plan(costs, request_of(58, 100)).steps, 100);
  EXPECT_THROW(budget_plan(costs, request_of(0, 100)), InputError);
}

TEST(BudgetPlan, ReplansOnlyWhenTheProjectedEndPassesTheBudget) {
  BudgetCosts costs;
  costs.step_s = 1.0, costs.eval_s = 2.0, costs.final_eval_s = 2.0;
  BudgetRequest request = request_of(100, 8);
  const BudgetPlan plan = budget_plan(costs, request);
  EXPECT_EQ(plan.steps, 75);  // 9 epochs: 72 + 18 = 90 s; 3 steps more and a 10th evaluation: 95 s
  // After the first epoch as planned (8 s of steps, 2 s of evaluation), the plan stands.
  BudgetCosts seen = costs;
  seen.spent_s = 10.0;
  request.done_steps = 8;
  EXPECT_FALSE(budget_replan_needed(plan, seen, request));
  // The machine slowed down to 1.5 s per step: 10 + 67 x 1.5 + 9 x 2 = 128.5 s > 100 s.
  seen.step_s = 1.5;
  ASSERT_TRUE(budget_replan_needed(plan, seen, request));
  const BudgetPlan next = budget_plan(seen, request);
  EXPECT_LT(next.steps, plan.steps);
  EXPECT_GT(next.steps, 8);
  EXPECT_LE(budget_cost(seen, request, next.steps), 95.0);
  EXPECT_GT(budget_cost(seen, request, next.steps + 1), 95.0);
  EXPECT_EQ(next.eval_steps.front(), 16);  // the first epoch's evaluation is behind it
  // So slow that not one more step fits: one is still planned, so the schedule ends.
  seen.step_s = 100.0;
  EXPECT_EQ(budget_plan(seen, request).steps, 9);
}

TEST(BudgetPlan, StretchesOnlyWhenTheCostsSeenAllowItsShareOfMoreSteps) {
  BudgetCosts costs;
  costs.step_s = 1.0, costs.eval_s = 2.0, costs.final_eval_s = 2.0;
  BudgetRequest request = request_of(100, 8);
  const BudgetPlan plan = budget_plan(costs, request);  // 75 steps, as above
  request.done_steps = 8;
  BudgetCosts seen = costs;
  seen.spent_s = 10.0;  // the first epoch as planned: the same 75 steps fit, nothing to stretch
  EXPECT_EQ(budget_plan(seen, request).steps, 75);
  EXPECT_FALSE(budget_stretch_pays(plan, budget_plan(seen, request), 0.03));
  seen.spent_s = 9.0;  // 1 s saved: one step more fits, 1.3%, under the 3% a stretch needs
  EXPECT_EQ(budget_plan(seen, request).steps, 76);
  EXPECT_FALSE(budget_stretch_pays(plan, budget_plan(seen, request), 0.03));
  seen.step_s = 0.8;  // steps of 0.8 s: 9 + 0.8 N + evaluations fit 95 s with N = 85 -> 93 steps, 24% more
  const BudgetPlan stretched = budget_plan(seen, request);
  EXPECT_TRUE(budget_stretch_pays(plan, stretched, 0.03));
  EXPECT_GT(stretched.steps, 75 * 1.03);
  EXPECT_LE(budget_cost(seen, request, stretched.steps), 95.0);
  EXPECT_GT(budget_cost(seen, request, stretched.steps + 1), 95.0);
}

TEST(BudgetPlan, ACheckWindowNeedsItsStepsAndItsSeconds) {
  BudgetStepWindows windows(0.1, 4, 2.0);  // at least 4 steps and 2 s
  EXPECT_FALSE(windows.step_done(1, 5.0));  // the first step (the loader's start) only opens the window
  for (int64_t step = 2; step < 21; ++step) EXPECT_FALSE(windows.step_done(step, 5.0 + 0.1 * (step - 1))) << step;
  EXPECT_TRUE(windows.step_done(21, 7.0));  // 20 steps of 0.1 s: 2 s
  EXPECT_NEAR(windows.step_s(), 0.1, 1e-12);
  EXPECT_FALSE(windows.step_done(22, 9.0));  // 2 s, but one step
  EXPECT_FALSE(windows.step_done(24, 13.0));
  EXPECT_TRUE(windows.step_done(25, 15.0));  // 4 steps of 2 s
}

TEST(BudgetPlan, OneSlowWindowMovesNoStepCostTwoDo) {
  // The 6 s run that used to re-plan: ~6.4 ms steps, and a 25 ms hiccup in one window of 20.
  BudgetStepWindows windows(0.0064, 4, 0.12);
  double trained_s = 0.0;
  int64_t step = 0;
  auto window = [&](double step_s, double hiccup_s = 0.0) {
    trained_s += hiccup_s;
    for (int i = 0; i < 20; ++i) trained_s += step_s, ++step;
    EXPECT_TRUE(windows.step_done(step, trained_s)) << step;
    return windows.step_s();
  };
  windows.step_done(step, trained_s);
  EXPECT_NEAR(window(0.008), 0.0064, 1e-12);         // the first slower window: the planned cost stands
  EXPECT_NEAR(window(0.0062), 0.0062, 1e-12);
  EXPECT_NEAR(window(0.0062, 0.025), 0.0062, 1e-12);  // a hiccup: its window is not projected
  EXPECT_NEAR(window(0.0062), 0.0062, 1e-12);
  EXPECT_NEAR(window(0.0124), 0.0062, 1e-12);         // a slow-down: seen in one window ...
  EXPECT_NEAR(window(0.0124), 0.0124, 1e-12);         // ... and projected once it lasts two
  EXPECT_NEAR(window(0.0062), 0.0062, 1e-12);         // faster again
  EXPECT_NEAR(windows.step_s_high(), 0.0124, 1e-12);  // a stretch projects with the slower of the two
  // ... or with the mean of the last five windows, where that is slower: 100 steps and the hiccup in 0.893 s.
  EXPECT_NEAR(windows.mean_s(), 0.893 / 100, 1e-12);
  window(0.0062);
  EXPECT_NEAR(windows.step_s_high(), 0.868 / 100, 1e-12);  // the hiccup's window has left the five
  for (int i = 0; i < 5; ++i) window(0.0062);
  EXPECT_NEAR(windows.step_s_high(), 0.0062, 1e-12);  // faster for five windows: the slow ones are forgotten
}

TEST(BudgetPlan, AStretchKeepsFreeTheMarginAndATenthOfTheTimeStillToCome) {
  EXPECT_NEAR(budget_stretch_margin(0.03, 0.1, 210.0, 300.0), 0.10, 1e-12);  // early: 9 s + 21 s
  EXPECT_NEAR(budget_stretch_margin(0.03, 0.1, 30.0, 300.0), 0.04, 1e-12);   // the last epoch: 9 s + 3 s
  EXPECT_EQ(budget_stretch_margin(0.03, 0.1, 0.0, 300.0), 0.03);
  EXPECT_EQ(budget_stretch_margin(0.03, 0.1, 1e6, 300.0), 0.9);              // never the whole budget
}

TEST(BudgetPlan, ScheduleWarpKeepsTheStartAndTheEnd) {
  EXPECT_EQ(schedule_warp(10, 40, 100, 70), 10.0);  // before the re-plan: unchanged
  EXPECT_EQ(schedule_warp(40, 40, 100, 70), 40.0);  // continuous where it starts
  EXPECT_EQ(schedule_warp(69, 40, 100, 70), 99.0);  // the new last step is the old last
  EXPECT_NEAR(schedule_warp(54.5, 40, 100, 70), 69.5, 1e-12);  // the middles of 40..69 and 40..99
  EXPECT_EQ(schedule_warp(41, 40, 100, 41), 99.0);   // one step left: the schedule's last value
}

TEST(BudgetPlan, ReplannedOneCycleEndsWhereItWouldHave) {
  ScheduleConfig config;  // onecycle
  const LrSchedule planned(config, 0.1, 100, 10);
  LrSchedule replanned = planned;
  replanned.replan(40, 70);
  for (int64_t step : {0, 20, 39, 40}) EXPECT_EQ(replanned.lr_at(step), planned.lr_at(step)) << step;
  EXPECT_EQ(replanned.lr_at(69), planned.lr_at(99));
  EXPECT_LT(replanned.lr_at(69), 1e-5);  // one-cycle's floor: 0.1 / 25 / 1e4
  for (int64_t step = 41; step < 70; ++step) EXPECT_LT(replanned.lr_at(step), replanned.lr_at(step - 1)) << step;
  replanned.replan(50, 60);  // a second re-plan composes with the first
  EXPECT_EQ(replanned.lr_at(59), planned.lr_at(99));
  EXPECT_EQ(replanned.total_steps(), 60);
}

TEST(BudgetPlan, BudgetSecondsTurnsOffForAGivenLength) {
  TrainConfig config;
  EXPECT_EQ(budget_seconds(config), 300.0);  // bare `fastloop train`
  config.run.time_budget = "5m";
  EXPECT_EQ(budget_seconds(config), 300.0);
  config.run.epochs = 2;
  EXPECT_EQ(budget_seconds(config), 0.0);
  config.run.epochs = 8, config.run.max_steps = 20;
  EXPECT_EQ(budget_seconds(config), 0.0);
  config.run.max_steps = 0, config.run.time_budget = "off";
  EXPECT_EQ(budget_seconds(config), 0.0);
  config.run.time_budget = "soon";
  EXPECT_THROW(budget_seconds(config), InputError);
  test::TempDir dir;  // --resume: fresh (auto) or the setup's own message (on) without a checkpoint; refused with one
  config.run.time_budget = "300s", config.run.checkpoint_dir = dir.path(), config.run.resume = "auto";
  EXPECT_EQ(budget_seconds(config), 300.0);
  config.run.resume = "on";
  EXPECT_EQ(budget_seconds(config), 0.0);
  std::ofstream(checkpoint_path_in(dir.path())) << "a checkpoint";
  EXPECT_THROW(budget_seconds(config), InputError);
  config.run.resume = "off";
  EXPECT_THROW(budget_seconds(config, 2), InputError);
}

}  // namespace
}  // namespace fastloop
