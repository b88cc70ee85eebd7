// `fastloop tune` on a tiny model and synthetic data: it keeps to its budget, its winner is the
// fastest of its own accepted trials, and the recipe it writes is one `train` accepts and runs.
#include "fastloop/core/config_text.h"
#include "fastloop/core/errors.h"
#include "fastloop/tune/tuner.h"

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

TrainConfig tiny_base() {
  TrainConfig config;
  config.data.source = "synthetic:1x12x12:512";
  config.data.batch_size = 32;
  config.model.name = "small_cnn";
  config.run.epochs = 1;
  return config;
}


}  // namespace

TEST(Tune, KeepsToItsBudgetAndPicksTheFastestOfItsTrials) {
  TuneOptions options;
  options.base = tiny_base();
  options.budget_s = 40.0;
  options.trial.warmup_steps = 1;
  options.trial.timed_steps = 3;
  const TuneResult result = tune_run(options);

  ASSERT_GE(result.trials.size(), 3u);
  double longest_trial = 0.0;
  for (const auto& t : result.trials) longest_trial = std::max(longest_trial, t.result.seconds);
  // No trial starts once the previous trial's length would overrun the budget.
  EXPECT_LE(result.seconds, options.budget_s + 2 * longest_trial);

  const TuneTrial& best = result.best();
  EXPECT_TRUE(best.result.ok);
  for (const auto& t : result.trials) {
    const bool accepted = t.result.ok && t.verdict.rfind("rejected", 0) != 0;
    if (accepted) EXPECT_LE(t.result.img_per_s, best.result.img_per_s) << "trial " << t.index << " " << t.change;
    if (t.result.ok) EXPECT_GT(t.result.img_per_s, 0.0);
  }
  // Every option the search changed kept the first-step loss within its tolerance (1e-2 for AMP).
  for (const auto& t : result.trials) {
    if (t.result.ok && t.verdict.rfind("rejected", 0) != 0) {
      EXPECT_NEAR(t.result.first_loss, result.trials[0].result.first_loss,
                  1e-2 * std::abs(result.trials[0].result.first_loss)) << t.change;
    }
  }
  EXPECT_FALSE(result.choices.empty());
}

TEST(Tune, StopsAfterMaxTrials) {
  TuneOptions options;
  options.base = tiny_base();
  options.max_trials = 2;
  options.trial.warmup_steps = 1;
  options.trial.timed_steps = 2;
  const TuneResult result = tune_run(options);
  EXPECT_EQ(result.trials.size(), 2u);
  EXPECT_NE(tune_markdown(result).find("the budget ran out"), std::string::npos);
}

TEST(Tune, RejectsBatchSizesThatAreNotMultiplesOf8) {
  TuneOptions options;
  options.base = tiny_base();
  options.batch_sizes = {32, 36};
  EXPECT_THROW(tune_run(options), InputError);
  EXPECT_EQ(tune_batch_sizes_near(128), (std::vector<int64_t>{64, 128, 256}));
  EXPECT_EQ(tune_batch_sizes_near(12), (std::vector<int64_t>{8, 16, 24}));
}

TEST(Tune, RecipeRoundTripsThroughTomlAndTrainAcceptsIt) {
  // The recipe writer covers every field: a non-default config reads back equal.
  TrainConfig config = tiny_base();
  config.perf.amp = "bf16";
  config.optim.lr = 0.0125;
  config.run.init_skip = "^fc\\.\"quoted\"";
  const auto dir = fs::path(testing::TempDir()) / "tune_recipe";
  fs::create_directories(dir);
  {
    std::ofstream(dir / "roundtrip.toml") << config_to_toml(config, {{"perf.amp", "a comment"}});
  }
  TrainConfig read;
  config_load_toml(read, (dir / "roundtrip.toml").string());
  EXPECT_EQ(config_to_json(read), config_to_json(config));
  EXPECT_EQ(config_field_text(read, "perf.amp"), "bf16");
  EXPECT_THROW(config_field_set(read, "perf.channels_last", "maybe"), InputError);

  // The CLI end to end: tune writes a recipe, train runs it.
  const std::string recipe = (dir / "tuned.toml").string();
  const auto tuned = test::cli_run("tune --data synthetic:1x12x12:512 --batch-size 32 --trials 3 --tune-warmup 1"
                                    " --tune-steps 2 --out " + recipe);
  ASSERT_EQ(tuned.code, 0) << tuned.output;
  EXPECT_TRUE(fs::exists(dir / "tuned.md"));
  EXPECT_TRUE(fs::exists(dir / "tuned.json"));
  const auto trained = test::cli_run("train --config " + recipe + " --max-steps 2 --epochs 1");
  EXPECT_EQ(trained.code, 0) << trained.output;
  EXPECT_NE(trained.output.find("test accuracy"), std::string::npos) << trained.output;
}
