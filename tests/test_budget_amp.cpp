// --time-budget with --perf auto on a CPU with native bf16: the calibration times bf16 and float32 steps and
// the run trains in the faster (bf16 ran 15-25% slower than float32 on a 2-core Xeon without AMX). Checked:
// which runs are offered the choice, that the faster of the recorded timings is the one trained in (not
// which is faster: that is this machine's), and that the plan's replay flags repeat the run bit for bit.
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/trainer.h"

#include "temp_dir.h"
#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace fastloop {
namespace {

PerfHardware cpu_with_bf16(bool native_bf16) {
  PerfHardware hw;
  hw.cpu.logical_cores = 2;
  hw.cpu.avx512 = true;
  hw.cpu.native_bf16 = native_bf16;
  return hw;
}

std::vector<std::string> candidates(const PerfHardware& hw, const std::set<std::string>& given = {},
                                    const std::string& mode = "auto") {
  TrainConfig config;
  config.perf.mode = mode;
  config.perf.device = "cpu";
  if (mode == "auto") perf_auto_apply(config, hw, given);
  return perf_auto_amp_candidates(config, hw, given);
}

TEST(BudgetAmp, OnlyPerfAutosOwnBf16ChoiceIsTimedAgainstFloat32) {
  EXPECT_EQ(candidates(cpu_with_bf16(true)), (std::vector<std::string>{"bf16", "off"}));
  EXPECT_TRUE(candidates(cpu_with_bf16(false)).empty());              // auto chose float32: nothing to compare
  EXPECT_TRUE(candidates(cpu_with_bf16(true), {"--amp"}).empty());    // --amp given: it stands
  EXPECT_TRUE(candidates(cpu_with_bf16(true), {}, "manual").empty()); // --perf manual: the flags stand
  PerfHardware gpu = cpu_with_bf16(true);
  gpu.cuda = true, gpu.cuda_major = 8;
  EXPECT_TRUE(candidates(gpu).empty());  // CUDA's bf16 tensor cores: not timed
}

/// 1 s per step, 2 s per evaluation: the plan does not depend on this machine's speed.
BudgetCosts amp_steady_costs(const BudgetCosts&, int64_t done_steps) {
  BudgetCosts costs;
  costs.step_s = 1.0, costs.eval_s = 2.0, costs.final_eval_s = 2.0;
  costs.trained_s = static_cast<double>(done_steps);
  costs.spent_s = costs.trained_s + static_cast<double>(done_steps / 8) * 2.0;
  return costs;
}

TEST(BudgetAmp, TheRunTrainsInTheFasterPrecisionTimedAndItsPlanReplaysIt) {
  test::TempDir dir;
  TrainConfig config = test::tiny_config(256, 32);
  config.run.epochs = RunConfig{}.epochs;  // the budget plans the length
  config.run.time_budget = "100s";
  config.run.eval_every = 1;  // as the costs above count
  config.run.checkpoint_dir = dir.path() + "/ckpt";
  config.perf.amp = "bf16";  // as --perf auto sets it on a CPU with native bf16
  TrainControl control;
  control.progress = false;
  control.budget_costs = amp_steady_costs;
  control.amp_candidates = {"bf16", "off"};
  const TrainSummary budgeted = train(config, control);

  const auto plan = nlohmann::json::parse(budgeted.budget)["plan"];
  const double bf16_s = plan["amp"]["step_s"]["bf16"], off_s = plan["amp"]["step_s"]["off"];
  EXPECT_GT(bf16_s, 0.0);
  EXPECT_GT(off_s, 0.0);
  const std::string chosen = plan["amp"]["chosen"];
  EXPECT_EQ(chosen, off_s < bf16_s ? "off" : "bf16");
  const auto saved = nlohmann::json::parse(Checkpoint::read(checkpoint_path_in(dir.path() + "/ckpt")).config_json());
  EXPECT_EQ(saved["perf.amp"], chosen);  // what the run trained in
  ASSERT_EQ(plan["steps"], 77);          // as BudgetRun.PlannedRunIsReplayedBitForBitByItsSteps

  // The replay: --epochs, --max-steps and --amp as recorded; the same weights to the bit.
  TrainConfig replay = test::tiny_config(256, 32);
  replay.run.epochs = 10, replay.run.max_steps = 77, replay.perf.amp = chosen;
  const TrainSummary replayed = train(replay, control);
  EXPECT_EQ(replayed.test.loss, budgeted.test.loss);
  replay.perf.amp = chosen == "off" ? "bf16" : "off";  // and the other precision is told apart
  EXPECT_NE(train(replay, control).test.loss, budgeted.test.loss);
}

}  // namespace
}  // namespace fastloop
