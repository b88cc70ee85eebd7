// Runs that cannot go on end with one clear message and keep what they had: a loss that becomes
// inf/nan stops at the step (--nan-policy stop) naming the last good checkpoint; steps skipped again
// and again end the run (--max-skipped-steps) with AMP's scaler or --nan-policy skip; a batch that
// does not fit in memory names its size and the way out instead of aborting.
#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/trainer.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

// SGD at lr 1e38: the weights reach inf within a few steps, so the loss turns nan mid-run.
TrainConfig diverging_run(const std::string& dir) {
  TrainConfig config = test::tiny_config(256, 16);
  config.data.workers = 0;
  config.optim.lr = 1e38;
  config.schedule.name = "constant";
  config.run.checkpoint_dir = dir;
  config.run.checkpoint_every = 1;
  return config;
}


TrainControl quiet() {
  TrainControl control;
  control.progress = false;
  return control;
}

std::string run_error(const TrainConfig& config) {
  try {
    train(config, quiet());
  } catch (const RunError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(Faults, NonFiniteLossStopsAtTheStepNamingTheLastGoodCheckpoint) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("nan_stop");
  const std::string message = run_error(diverging_run(dir));
  ASSERT_FALSE(message.empty()) << "the diverging run finished without an error";
  EXPECT_TRUE(contains(message, "inf/nan at optimizer step")) << message;
  EXPECT_TRUE(contains(message, dir + "/last.ckpt")) << message;
  EXPECT_TRUE(contains(message, "--resume")) << message;
  // The checkpoint it names loads, is from before the failing step, and holds finite weights.
  const auto step_pos = message.find("optimizer step ") + 15;
  const int64_t failed_step = std::stoll(message.substr(step_pos));
  auto checkpoint = Checkpoint::read(dir + "/last.ckpt");
  EXPECT_EQ(checkpoint.position().step, failed_step - 1);
  EXPECT_GE(checkpoint.position().step, 1) << "the loss should stay finite for at least one step";
}

TEST(Faults, NanPolicySkipEndsARunThatNeverRecoversAfterMaxSkippedSteps) {
  const test::TempDir tmp;
  auto config = diverging_run(tmp.sub("nan_skip"));
  config.run.nan_policy = "skip";
  config.run.max_skipped_steps = 3;
  const std::string message = run_error(config);
  EXPECT_TRUE(contains(message, "3 optimizer steps in a row were skipped")) << message;
  EXPECT_TRUE(contains(message, "--nan-policy skip")) << message;
}

TEST(Faults, AmpScalerSkipsThenMaxSkippedStepsEndsTheRun) {
  const test::TempDir tmp;
  auto config = diverging_run(tmp.sub("amp_skip"));
  config.perf.amp = "fp16";
  config.run.max_skipped_steps = 4;
  const std::string message = run_error(config);
  EXPECT_TRUE(contains(message, "4 optimizer steps in a row were skipped")) << message;
  EXPECT_TRUE(contains(message, "AMP scaler")) << message;
}

TEST(Faults, FiniteRunIsUnaffectedByTheNanCheck) {
  const test::TempDir tmp;
  auto config = diverging_run(tmp.sub("finite"));
  config.optim.lr = 0.05;
  config.run.max_steps = 5;
  const auto summary = train(config, quiet());
  EXPECT_EQ(summary.position.step, 5);
  EXPECT_EQ(summary.skipped_steps, 0);
}

// The process may map only so much memory (ulimit -v): a batch far too big for it fails in the
// training step, and the CLI says which batch and what to do, exit 3, instead of aborting.
TEST(Faults, BatchTooBigForMemoryGivesTheSizeAndTheWayOut) {
  const auto [code, output] = test::shell_run("ulimit -v 6000000; " + test::cli_word() +
                                               " train --data synthetic:3x32x32:2048 --model resnet18 --batch-size 2048"
                                               " --workers 0 --max-steps 1 --threads 1 --device cpu");
  ASSERT_NE(code, -1) << "killed instead of a clean error:\n" << output;
  EXPECT_EQ(code, 3) << output;
  EXPECT_TRUE(contains(output, "a training batch of 2048 images")) << output;
  EXPECT_TRUE(contains(output, "--accumulate 2")) << output;
}
