// Learning-rate schedules against values PyTorch's schedulers produced (tests/golden/schedule.json).
#include "fastloop/train/schedule.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace fastloop;

namespace {

/// The one-cycle schedule with `anneal` against OneCycleLR's learning rates in the golden file under `key`.
void expect_onecycle_matches_torch(const std::string& anneal, const std::string& key) {
  std::ifstream in(FASTLOOP_TEST_DIR "/golden/schedule.json");
  ASSERT_TRUE(in) << "run tests/tools/make_schedule_golden.py";
  auto golden = nlohmann::json::parse(in);
  ScheduleConfig config;
  config.name = "onecycle";
  config.anneal_strategy = anneal;
  config.pct_start = golden["pct_start"].get<double>();
  const int64_t total = golden["total_steps"].get<int64_t>();
  LrSchedule schedule(config, golden["max_lr"].get<double>(), total, 10);
  const auto& lrs = golden[key];
  ASSERT_EQ(static_cast<int64_t>(lrs.size()), total);
  for (int64_t s = 0; s < total; ++s) EXPECT_NEAR(schedule.lr_at(s), lrs[s].get<double>(), 1e-9) << "step " << s;
}

}  // namespace

TEST(Schedule, OneCycleMatchesTorchOneCycleLR) { expect_onecycle_matches_torch("cos", "onecycle"); }

TEST(Schedule, OneCycleLinearMatchesTorchOneCycleLRLinearAnneal) {
  expect_onecycle_matches_torch("linear", "onecycle_linear");
}

TEST(Schedule, LinearMatchesTorchLinearLRWarmUpThenDecay) {
  std::ifstream in(FASTLOOP_TEST_DIR "/golden/schedule.json");
  ASSERT_TRUE(in) << "run tests/tools/make_schedule_golden.py";
  auto golden = nlohmann::json::parse(in);
  ScheduleConfig config;
  config.name = "linear";
  config.warmup_epochs = 1;  // one epoch of golden["warmup_steps"] steps
  const int64_t total = golden["total_steps"].get<int64_t>();
  LrSchedule schedule(config, golden["max_lr"].get<double>(), total, golden["warmup_steps"].get<int64_t>());
  const auto& lrs = golden["linear"];
  ASSERT_EQ(static_cast<int64_t>(lrs.size()), total);
  for (int64_t s = 0; s < total; ++s) EXPECT_NEAR(schedule.lr_at(s), lrs[s].get<double>(), 1e-9) << "step " << s;
}

TEST(Schedule, LinearReplannedStillEndsAtZero) {
  ScheduleConfig config;
  config.name = "linear";
  LrSchedule schedule(config, 0.2, /*total_steps=*/100, /*steps_per_epoch=*/10);
  EXPECT_NEAR(schedule.lr_at(0), 0.2, 1e-12);
  EXPECT_NEAR(schedule.lr_at(50), 0.1, 1e-12);
  schedule.replan(/*from=*/50, /*new_total=*/60);  // a slowed machine: 10 steps left instead of 50
  EXPECT_NEAR(schedule.lr_at(50), 0.1, 1e-12);
  EXPECT_LT(schedule.lr_at(59), schedule.lr_at(55));
  EXPECT_NEAR(schedule.lr_at(59), 0.2 / 100, 1e-12);  // the schedule's own last step
}

TEST(Schedule, CosineWarmsUpLinearlyThenDecaysToZero) {
  ScheduleConfig config;
  config.name = "cosine";
  config.warmup_epochs = 1;
  LrSchedule schedule(config, 0.4, /*total_steps=*/100, /*steps_per_epoch=*/10);
  EXPECT_NEAR(schedule.lr_at(0), 0.04, 1e-12);
  EXPECT_NEAR(schedule.lr_at(9), 0.4, 1e-12);
  EXPECT_NEAR(schedule.lr_at(10), 0.4, 1e-12);
  EXPECT_NEAR(schedule.lr_at(55), 0.2, 1e-12);
  EXPECT_LT(schedule.lr_at(99), 0.001);
}

TEST(Schedule, StepDecaysEveryStepEpochs) {
  ScheduleConfig config;
  config.name = "step";
  config.step_epochs = 2;
  config.gamma = 0.5;
  LrSchedule schedule(config, 1.0, 100, 10);
  EXPECT_DOUBLE_EQ(schedule.lr_at(19), 1.0);
  EXPECT_DOUBLE_EQ(schedule.lr_at(20), 0.5);
  EXPECT_DOUBLE_EQ(schedule.lr_at(45), 0.25);
}
