// How often a run evaluates: --eval-every N (every Nth epoch's end and after the last step), and a
// --time-budget plan that chooses it (budget_eval_every: the evaluations before the last within 2% of the
// budget), as pure arithmetic and in short synthetic runs whose costs are injected (no clock asserted).
#include "fastloop/train/budget_plan.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/trainer.h"

#include "temp_dir.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <vector>

namespace fastloop {
namespace {

/// 1 s per step, 2 s per evaluation, 8 steps per epoch, a 100 s budget with a 5% margin (95 s), the
/// evaluations left to the plan: without any before the last, 93 steps fit (93 + 2 = 95 s), 11 epoch ends.
struct Planned {
  BudgetCosts costs;
  BudgetRequest request;
  Planned() {
    costs.step_s = 1.0, costs.eval_s = 2.0, costs.final_eval_s = 2.0;
    request.budget_s = 100, request.margin = 0.05, request.steps_per_epoch = 8, request.eval_every = 0;
  }
  BudgetPlan with_share(double share) {
    request.eval_share = share;
    return budget_plan(costs, request);
  }
};

TEST(EvalEveryPlan, EveryEpochWhenAllItsEvaluationsFitTheirShare) {
  Planned planned;
  const BudgetPlan plan = planned.with_share(0.3);  // 30 s: the 9 evaluations before the last fit
  EXPECT_EQ(plan.eval_every, 1);
  EXPECT_EQ(plan.steps, 75);  // as BudgetPlan.ReplansOnlyWhenTheProjectedEndPassesTheBudget
  EXPECT_EQ(plan.evals, 10);
}

TEST(EvalEveryPlan, EveryKthEpochTheFewestKWhoseEvaluationsFit) {
  Planned planned;
  BudgetPlan plan = planned.with_share(0.1);  // 10 s: 5 evaluations of the 11 epoch ends, every 3rd: 3
  EXPECT_EQ(plan.eval_every, 3);
  EXPECT_EQ(plan.steps, 87);  // 87 + 3 x 2 + 2 = 95 s
  EXPECT_EQ(plan.epochs, 11);
  EXPECT_EQ(plan.eval_steps, (std::vector<int64_t>{24, 48, 72, 87}));
  EXPECT_EQ(plan.planned_s, 95.0);
  plan = planned.with_share(0.02);  // 2 s, the default share: one, at the 11th epoch's end
  EXPECT_EQ(plan.eval_every, 11);
  EXPECT_EQ(plan.steps, 91);  // 91 + 2 + 2
  EXPECT_EQ(plan.eval_steps, (std::vector<int64_t>{88, 91}));
  EXPECT_NE(budget_plan_line(plan, planned.costs).find("2 evals of 2.0 s (every 11 epochs and after the last step)"),
            std::string::npos) << budget_plan_line(plan, planned.costs);
  EXPECT_NE(budget_plan_line(plan, planned.costs).find("--max-steps 91 --eval-every 11"), std::string::npos);
}

TEST(EvalEveryPlan, OnlyTheLastWhenNoneFitsAndFreeEvaluationsEveryEpoch) {
  Planned planned;
  BudgetPlan plan = planned.with_share(0.01);  // 1 s: not one evaluation of 2 s
  EXPECT_EQ(plan.eval_every, 12);              // beyond the 11 epoch ends
  EXPECT_EQ(plan.steps, 93);
  EXPECT_EQ(plan.eval_steps, (std::vector<int64_t>{93}));
  EXPECT_NE(budget_plan_line(plan, planned.costs).find("1 evals of 2.0 s (after the last step only)"),
            std::string::npos) << budget_plan_line(plan, planned.costs);
  planned.costs.eval_s = planned.costs.final_eval_s = 0.0;  // no test split: nothing to save
  EXPECT_EQ(planned.with_share(0.02).eval_every, 1);
}

TEST(EvalEveryPlan, AGivenIntervalStandsAndReplansKeepItsEpochs) {
  Planned planned;
  planned.request.eval_every = 2;  // --eval-every 2
  const BudgetPlan plan = budget_plan(planned.costs, planned.request);
  EXPECT_EQ(plan.eval_every, 2);
  EXPECT_EQ(plan.steps, 83);  // 83 + 5 x 2 + 2 = 95 s
  EXPECT_EQ(plan.eval_steps, (std::vector<int64_t>{16, 32, 48, 64, 80, 83}));
  // A re-plan in the third epoch (20 steps and the evaluation at 16 behind it, 22 s): the next is at 32.
  BudgetRequest request = planned.request;
  request.done_steps = 20;
  BudgetCosts seen = planned.costs;
  seen.spent_s = 22.0;
  const BudgetPlan next = budget_plan(seen, request);
  EXPECT_EQ(next.steps, 83);  // 22 + 63 + 4 x 2 + 2 = 95 s
  EXPECT_EQ(next.eval_steps, (std::vector<int64_t>{32, 48, 64, 80, 83}));
  EXPECT_EQ(budget_cost(seen, request, next.steps), 95.0);
}

/// The epoch lines of a --metrics file: for each, whether it carries test_acc.
std::vector<bool> evaluated_epochs(const std::string& path) {
  std::vector<bool> out;
  std::ifstream metrics(path);
  for (std::string line; std::getline(metrics, line);) {
    const auto json = nlohmann::json::parse(line);
    if (json["kind"] == "epoch") out.push_back(json.contains("test_acc") && json.contains("test_loss"));
  }
  return out;
}

TEST(EvalEvery, ARunEvaluatesEveryNthEpochAndAfterItsLastStep) {
  test::TempDir dir;
  TrainConfig config = test::tiny_config(256, 32);
  config.run.time_budget = "off";
  config.run.epochs = 5;
  config.run.eval_every = 2;
  config.run.metrics = dir.path() + "/metrics.jsonl";
  TrainControl control;
  control.progress = false;
  const TrainSummary summary = train(config, control);
  EXPECT_EQ(evaluated_epochs(config.run.metrics), (std::vector<bool>{false, true, false, true, true}));
  EXPECT_GT(summary.test.samples, 0);  // the final evaluation's
  config.run.eval_every = 0, config.run.metrics = dir.path() + "/every.jsonl";  // 0 without a budget: every epoch
  const TrainSummary every = train(config, control);
  EXPECT_EQ(evaluated_epochs(config.run.metrics), std::vector<bool>(5, true));
  EXPECT_EQ(every.test.loss, summary.test.loss);  // evaluations change nothing of the training
}

TEST(EvalEvery, ABudgetedRunEvaluatesWhereItsPlanSaidAndRecordsIt) {
  // 1 s steps, 2 s evaluations, 100 s with the 3% margin (97 s): without evaluations before the last 95 steps
  // fit (11 epoch ends); 2% of the budget is one evaluation: at the 11th epoch's end, then the final one.
  test::TempDir dir;
  TrainConfig config = test::tiny_config(256, 32);
  config.run.epochs = RunConfig{}.epochs;
  config.run.time_budget = "100s";
  config.run.metrics = dir.path() + "/metrics.jsonl";
  config.run.checkpoint_dir = dir.path() + "/ckpt";
  TrainControl control;
  control.progress = false;
  control.budget_costs = [](const BudgetCosts&, int64_t done_steps) {  // the clock of the plan's evaluations
    BudgetCosts costs;
    costs.step_s = 1.0, costs.eval_s = costs.final_eval_s = 2.0;
    costs.trained_s = static_cast<double>(done_steps);
    costs.spent_s = costs.trained_s + (done_steps >= 88 ? 2.0 : 0.0);
    return costs;
  };
  const TrainSummary summary = train(config, control);
  const auto record = nlohmann::json::parse(summary.budget);
  EXPECT_TRUE(record["replans"].empty()) << summary.budget;
  EXPECT_EQ(record["plan"]["eval_every"], 11);
  EXPECT_EQ(record["plan"]["steps"], 93);  // 93 + 2 + 2 = 97 s
  EXPECT_EQ(record["plan"]["eval_steps"], (std::vector<int64_t>{88, 93}));
  std::vector<bool> expected(12, false);
  expected[10] = expected[11] = true;
  EXPECT_EQ(evaluated_epochs(config.run.metrics), expected);
  const auto saved = nlohmann::json::parse(Checkpoint::read(checkpoint_path_in(config.run.checkpoint_dir)).config_json());
  EXPECT_EQ(saved["run.eval_every"], 11);  // the replay's --eval-every
  EXPECT_EQ(saved["run.max_steps"], 93);
}

}  // namespace
}  // namespace fastloop
