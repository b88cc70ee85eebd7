// --resize-min (progressive resizing): the side schedule (start, ramp in multiples of 4, end, clamps, a
// re-plan's warp), the batch resize (size, dtype, layout, ATen's antialiased values), the batches of a
// short run reaching the model at the scheduled sides, and --time-budget's cost model as pure arithmetic
// (two step costs in, the planned step cost and the check windows' full-size cost out).
#include "fastloop/core/errors.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/train/budget_plan.h"
#include "fastloop/train/cycle.h"
#include "fastloop/train/progressive_resize.h"
#include "fastloop/train/resize_cost.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/trainer.h"

#include "temp_dir.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <vector>

namespace fastloop {
namespace {

ResizeOptions ramp_of(int64_t min_side, double start, double end) {
  ResizeOptions options;
  options.min_side = min_side, options.start = start, options.end = end;
  return options;
}

TEST(ProgressiveResize, SideIsTheMinimumUntilStartThenGrowsInFoursToTheFullSideAtEnd) {
  const ResizeOptions options = ramp_of(16, 0.2, 0.6);  // 28 px: 12 px over 0.4 of the run
  EXPECT_EQ(resize_side_at(options, 28, 0.0), 16);
  EXPECT_EQ(resize_side_at(options, 28, 0.2), 16);
  EXPECT_EQ(resize_side_at(options, 28, 0.3), 16);   // 19 px: rounded down to 16
  EXPECT_EQ(resize_side_at(options, 28, 0.4), 20);   // 22 px
  EXPECT_EQ(resize_side_at(options, 28, 0.5), 24);   // 25 px
  EXPECT_EQ(resize_side_at(options, 28, 0.59), 24);  // 27.7 px: not yet the full side
  EXPECT_EQ(resize_side_at(options, 28, 0.6), 28);
  EXPECT_EQ(resize_side_at(options, 28, 0.99), 28);
  // Steps: step / total of the run.
  EXPECT_EQ(resize_side(options, 28, 40, 100), 20);
  EXPECT_EQ(resize_side(options, 28, 60, 100), 28);
  EXPECT_EQ(resize_side(options, 28, 99, 100), 28);
}

TEST(ProgressiveResize, SideIsClampedToTheMinimumAndTheFullSide) {
  // A minimum off the multiples of 4: the ramp's first multiple below it (8) is raised to it.
  EXPECT_EQ(resize_side_at(ramp_of(10, 0.0, 1.0), 32, 0.05), 10);
  EXPECT_EQ(resize_side_at(ramp_of(10, 0.0, 1.0), 32, 0.5), 20);  // 21 px
  // A full side off the multiples of 4: 28 up to the end, 30 from it.
  EXPECT_EQ(resize_side_at(ramp_of(16, 0.0, 0.5), 30, 0.49), 28);
  EXPECT_EQ(resize_side_at(ramp_of(16, 0.0, 0.5), 30, 0.5), 30);
  // Off, or a minimum at or above the full side: always the full side.
  EXPECT_EQ(resize_side_at(ramp_of(0, 0.0, 0.75), 28, 0.0), 28);
  EXPECT_EQ(resize_side_at(ramp_of(28, 0.0, 0.75), 28, 0.0), 28);
  EXPECT_EQ(resize_side_at(ramp_of(32, 0.0, 0.75), 28, 0.0), 28);
}

TEST(ProgressiveResize, ConfigRefusesAMinimumBelowEightAndAnEmptyRamp) {
  TrainConfig config = test::tiny_config();
  config.data.resize_min = 4;
  EXPECT_THROW(config_validate(config), InputError);
  config.data.resize_min = 16, config.data.resize_start = 0.8, config.data.resize_end = 0.8;
  EXPECT_THROW(config_validate(config), InputError);
  config.data.resize_end = 1.1;
  EXPECT_THROW(config_validate(config), InputError);
  config.data.resize_start = 0.0, config.data.resize_end = 1.0;
  EXPECT_NO_THROW(config_validate(config));
  const ResizeOptions options = resize_options(TrainConfig{}.data);
  EXPECT_FALSE(options.on());  // the defaults: off, ramp 0 -> 0.75
  EXPECT_EQ(options.start, 0.0);
  EXPECT_EQ(options.end, 0.75);
}

TEST(ProgressiveResize, AReplanKeepsTheSideContinuousAndTheRampEndingAtItsShareOfTheRest) {
  ResizeSchedule schedule(ramp_of(16, 0.0, 0.75), 100);
  const int64_t before = schedule.side(28, 40);
  schedule.replan(40, 70);  // compressed: the 60 steps left become 30
  EXPECT_EQ(schedule.side(28, 40), before);
  EXPECT_EQ(schedule.side(28, 39), resize_side(ramp_of(16, 0.0, 0.75), 28, 39, 100));  // before `from`: unchanged
  EXPECT_DOUBLE_EQ(schedule.fraction(69), 0.99);                                        // the last step: the last
  // The ramp reaches the full side at 0.75 of the first plan: step 75 of 100 then, 40 + 35 * 30 / 59 now.
  EXPECT_LT(schedule.side(28, 57), 28);
  EXPECT_EQ(schedule.side(28, 58), 28);
}

TEST(ProgressiveResize, ResizeBatchKeepsDtypeAndChannelsLastAndIsAtensAntialiasedBilinear) {
  at::manual_seed(0);
  const at::Tensor images = at::randn({4, 3, 28, 28}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor resized = resize_batch(images, 16);
  EXPECT_EQ(resized.sizes(), (std::vector<int64_t>{4, 3, 16, 16}));
  EXPECT_EQ(resized.scalar_type(), at::kFloat);
  EXPECT_TRUE(resized.is_contiguous(at::MemoryFormat::ChannelsLast));
  // interpolate(mode="bilinear", align_corners=False, antialias=True), whatever the input's layout.
  EXPECT_TRUE(at::equal(resized, at::_upsample_bilinear2d_aa(images.contiguous(), {16, 16}, false)));
  EXPECT_TRUE(resize_batch(images, 28).is_same(images));  // the full side: no copy

  const at::Tensor flat = at::full({2, 1, 28, 28}, 0.25);  // antialiasing averages: a flat image stays flat
  EXPECT_TRUE(at::allclose(resize_batch(flat, 12), at::full({2, 1, 12, 12}, 0.25)));
  EXPECT_TRUE(resize_batch(flat, 12).is_contiguous());

  const at::Tensor half = images.to(at::kBFloat16);  // --amp batches: through float32 on the CPU, and back
  const at::Tensor half_resized = resize_batch(half, 20);
  EXPECT_EQ(half_resized.scalar_type(), at::kBFloat16);
  EXPECT_TRUE(half_resized.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_EQ(resize_batch(at::zeros({1, 3, 28, 56}), 14).sizes(), (std::vector<int64_t>{1, 3, 14, 28}));
  EXPECT_THROW(resize_batch(at::zeros({3, 28, 28}), 14), c10::Error);
}

TEST(ProgressiveResize, TrainingBatchesReachTheModelAtTheScheduledSides) {
  TrainConfig config = test::tiny_config(256, 32);
  config.data.source = "synthetic:1x28x28:256";
  config.data.resize_min = 16;  // 8 steps: 16 px for steps 0-1, 20 for 2-3, 24 for 4-5, 28 from 6 (0.75)
  config.run.max_steps = 8;
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  Loader loader(data.train, setup.train_loader);
  const RunLength length = run_length(config, loader.batches_per_epoch(), data.train.size());
  ASSERT_EQ(length.total_steps, 8);
  TrainCycle cycles(setup, length, /*announce=*/false);
  loader.start_epoch(0);
  std::vector<int64_t> sides;
  for (TrainPosition position; position.step < length.total_steps; ++position.step, ++position.batch) {
    auto batch = loader.next();
    ASSERT_TRUE(batch);
    const at::Tensor loss = cycles.micro_step(*batch, position.step, 0, 1);
    EXPECT_TRUE(std::isfinite(loss.item<double>()));
    cycles.optimizer_step(position);
    sides.push_back(batch->images.size(2));  // micro_step hands the model the resized batch in its place
    EXPECT_EQ(batch->images.size(3), batch->images.size(2));
  }
  EXPECT_EQ(sides, (std::vector<int64_t>{16, 16, 20, 20, 24, 24, 28, 28}));

  // Calibration's timings: every batch as loaded (0), or at one side whatever the step.
  TrainCycle fixed(setup, length, /*announce=*/false);
  TrainPosition position;
  loader.start_epoch(1);
  for (const int64_t side : {0, 16, 40}) {
    fixed.resize_fix(side);
    auto batch = loader.next();
    ASSERT_TRUE(batch);
    fixed.micro_step(*batch, side == 16 ? 7 : 0, 0, 1);
    fixed.optimizer_step(position);
    EXPECT_EQ(batch->images.size(2), side == 16 ? 16 : 28) << "resize_fix(" << side << ")";
  }
  loader.stop();
}

TEST(ProgressiveResize, ARunWithResizingCompletesAndEvaluatesAtTheFullSide) {
  TrainConfig config = test::tiny_config(256, 32);
  config.data.source = "synthetic:1x28x28:256";
  config.data.resize_min = 16, config.data.resize_start = 0.25, config.data.resize_end = 0.5;
  config.run.max_steps = 6;
  TrainControl control;
  control.progress = false;
  const TrainSummary summary = train(config, control);
  EXPECT_EQ(summary.position.step, 6);
  EXPECT_GT(summary.test.samples, 0);
  EXPECT_TRUE(std::isfinite(summary.test.loss));
}

// --- --time-budget: the cost model (resize_cost.h) ---

/// 28 px Fashion-MNIST's default ramp: 16 px, then 20 from 0.25 of the run, 24 from 0.5, 28 from 0.75.
/// A full-size step 1 s, a 16 px one 0.4 s: factors 0.4, 0.4 + 0.6 * 144 / 528, 0.4 + 0.6 * 320 / 528, 1.
ResizeStepCosts default_ramp_costs() {
  ResizeStepCosts costs;
  costs.options = ramp_of(16, 0.0, 0.75);
  costs.full_side = 28, costs.full_s = 1.0, costs.min_s = 0.4;
  return costs;
}

constexpr double kFactor20 = 0.4 + 0.6 * 144.0 / 528.0, kFactor24 = 0.4 + 0.6 * 320.0 / 528.0;

TEST(ProgressiveResizeBudget, PlannedStepCostIsTheFullCostTimesTheMeanFactorOverTheRamp) {
  const ResizeStepCosts costs = default_ramp_costs();
  EXPECT_DOUBLE_EQ(costs.factor(16), 0.4);
  EXPECT_DOUBLE_EQ(costs.factor(20), kFactor20);
  EXPECT_DOUBLE_EQ(costs.factor(28), 1.0);
  const double mean = 0.25 * (0.4 + kFactor20 + kFactor24 + 1.0);  // 0.6818
  EXPECT_NEAR(costs.mean_factor(), mean, 1e-12);
  EXPECT_NEAR(costs.planned_step_s(), mean, 1e-12);
  EXPECT_NEAR(costs.mean_factor(0.5), 0.5 * (kFactor24 + 1.0), 1e-12);  // what is left at half-way
  EXPECT_DOUBLE_EQ(costs.mean_factor(0.8), 1.0);
  // The same as the mean over any run's steps, as the trainer resizes them (the ramp is in fractions).
  for (const int64_t total : {400, 4000}) {
    double sum = 0.0;
    for (int64_t step = 0; step < total; ++step) sum += costs.factor(resize_side(costs.options, 28, step, total));
    EXPECT_NEAR(sum / static_cast<double>(total), mean, 1.0 / static_cast<double>(total)) << total << " steps";
  }
  ResizeStepCosts off = costs;  // off, or nothing to resize: the measured cost as it is
  off.options.min_side = 0;
  EXPECT_EQ(off.planned_step_s(), 1.0);
  off.options.min_side = 28;
  EXPECT_EQ(off.mean_factor(0.3), 1.0);
}

TEST(ProgressiveResizeBudget, CheckWindowsMeasureFullSizeStepsAndProjectWhatIsLeft) {
  ResizeCostModel model(default_ramp_costs(), 100);
  EXPECT_NEAR(model.work(25), 25 * 0.4, 1e-9);  // steps 0-24 at 16 px
  EXPECT_NEAR(model.work(100), 25 * (0.4 + kFactor20 + kFactor24 + 1.0), 1e-9);
  EXPECT_NEAR(model.full_step_s(0.25 * (0.4 + kFactor20 + kFactor24 + 1.0)), 1.0, 1e-12);
  EXPECT_NEAR(model.step_s_after(50, 2.0), 2.0 * 0.5 * (kFactor24 + 1.0), 1e-12);

  // A machine whose steps cost what the model says, 2 s at full size: each window measures 2 s per
  // full-size step, the 16 px ones (0.8 s per step) as well as the full-size ones.
  BudgetStepWindows windows(1.0, 4, 0.0);
  double trained_s = 0.0;
  for (int64_t step = 1; step <= 100; ++step) {
    trained_s += 2.0 * default_ramp_costs().factor(resize_side(ramp_of(16, 0.0, 0.75), 28, step - 1, 100));
    if (windows.step_done(step, trained_s, model.work(step)) && step > 9) {
      EXPECT_NEAR(windows.step_s_high(), 2.0, 1e-9) << "step " << step;
    }
  }
  // Without the model the first windows measured 0.8 s steps: projected onto the rest, a plan 2.5x too long.
  BudgetStepWindows plain(1.0, 4, 0.0);
  for (int64_t step = 1; step <= 9; ++step) plain.step_done(step, 0.8 * static_cast<double>(step));
  EXPECT_NEAR(plain.step_s(), 0.8, 1e-9);

  ResizeCostModel off;  // off: work counts steps, costs pass unchanged
  EXPECT_EQ(off.work(7), 7.0);
  EXPECT_EQ(off.step_s_after(3, 1.5), 1.5);
}

TEST(ProgressiveResizeBudget, AReplanProjectsTheRestOfTheWarpedSchedule) {
  ResizeCostModel model(default_ramp_costs(), 100);
  model.replan(50, 80);  // the second half compressed into 30 steps: still 24 px then 28 from 0.75
  EXPECT_NEAR(model.step_s_after(50, 1.0), 0.5 * (kFactor24 + 1.0), 1e-12);
  EXPECT_NEAR(model.work(80) - model.work(50), 30 * 0.5 * (kFactor24 + 1.0), 1.0);  // 30 steps, one side's rounding
}

TEST(ProgressiveResizeBudget, ABudgetedRunRecordsBothStepCostsAndEndsWhereItsLastPlanSaid) {
  test::TempDir dir;
  TrainConfig config = test::tiny_config(256, 32);
  config.data.source = "synthetic:1x28x28:256";
  config.data.resize_min = 16;
  config.run.epochs = RunConfig{}.epochs;
  config.run.time_budget = "100s";
  config.run.eval_every = 1;  // as the costs below count
  TrainControl control;
  control.progress = false;
  control.budget_costs = [](const BudgetCosts&, int64_t done_steps) {  // 1 s steps, 2 s evaluations
    BudgetCosts costs;
    costs.step_s = 1.0, costs.eval_s = costs.final_eval_s = 2.0;
    costs.trained_s = static_cast<double>(done_steps);
    costs.spent_s = costs.trained_s + static_cast<double>(done_steps / 8) * 2.0;
    return costs;
  };
  const TrainSummary summary = train(config, control);
  const auto record = nlohmann::json::parse(summary.budget);
  const auto& resize = record["plan"]["resize"];
  EXPECT_EQ(resize["min_side"], 16);
  EXPECT_EQ(resize["full_side"], 28);
  EXPECT_GT(resize["min_step_s"].get<double>(), 0.0);
  EXPECT_GT(resize["full_step_s"].get<double>(), 0.0);
  EXPECT_GT(resize["mean_factor"].get<double>(), 0.0);
  const int64_t steps = record["replans"].empty() ? record["plan"]["steps"] : record["replans"].back()["steps"];
  EXPECT_EQ(summary.position.step, steps);
}

}  // namespace
}  // namespace fastloop
