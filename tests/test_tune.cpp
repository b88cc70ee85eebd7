// `fastloop tune` on a tiny model and synthetic data: it keeps to its budget, its winner is the
// fastest of its own accepted trials, and the recipe it writes is one `train` accepts and runs.
#include "fastloop/core/config_text.h"
#include "fastloop/core/errors.h"
#include "fastloop/tune/tuner.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

TrainConfig tiny_base() {
  TrainConfig config = test::tiny_config(512, 32);
  config.run.threads = 0;  // the tuner starts from all usable cores and searches fewer
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
  EXPECT_TRUE(trial_verdict_may_win(best.verdict));
  for (const auto& t : result.trials) {
    if (trial_verdict_may_win(t.verdict)) {
      EXPECT_LE(t.result.img_per_s, best.result.img_per_s) << "trial " << t.index << " " << t.change;
    }
    if (t.result.ok) {
      EXPECT_GT(t.result.img_per_s, 0.0);
    }
  }

  // Every verdict follows from the trial's own numbers: replaying them in order against the best so far
  // gives the same decisions (2% faster: kept; 15% slower: pruned; loss beyond tolerance: rejected).
  const double base_loss = result.trials[0].result.first_loss;
  double best_so_far = result.trials[0].result.img_per_s;
  EXPECT_EQ(result.trials[0].verdict, TrialVerdict::baseline);
  for (size_t i = 1; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    const double ratio = t.result.img_per_s / best_so_far;
    const double loss_change = std::abs(t.result.first_loss - base_loss) / std::abs(base_loss);
    EXPECT_EQ(t.result.ok, t.verdict != TrialVerdict::failed) << t.change;
    EXPECT_FALSE(t.reason.empty()) << t.change;
    EXPECT_EQ(t.change, t.key + "=" + t.value);
    switch (t.verdict) {
      case TrialVerdict::baseline: ADD_FAILURE() << "trial " << i << " is a second baseline"; break;
      case TrialVerdict::failed: break;
      case TrialVerdict::rejected: EXPECT_GT(loss_change, 1e-5) << t.change; break;  // the smallest tolerance
      case TrialVerdict::kept:
        EXPECT_GE(ratio, 1.02) << t.change;
        best_so_far = t.result.img_per_s;
        break;
      case TrialVerdict::pruned_slower: EXPECT_LT(ratio, 0.85) << t.change; break;
      case TrialVerdict::not_faster:
        EXPECT_GE(ratio, 0.85) << t.change;
        EXPECT_LT(ratio, 1.02) << t.change;
        break;
    }
    // Every option the search accepted kept the first-step loss within its tolerance (1e-2 for AMP).
    if (trial_verdict_may_win(t.verdict)) {
      EXPECT_LE(loss_change, 1e-2) << t.change;
    }
  }
  // A winner's setting that differs from the start (the baseline trial, threads 0 spelled out) was
  // measured in a trial that may win.
  ASSERT_FALSE(result.choices.empty());
  for (const auto& c : result.choices) {
    if (c.value == config_field_text(result.trials[0].config, c.key)) continue;
    bool measured = false;
    for (const auto& t : result.trials) measured |= t.key == c.key && t.value == c.value && trial_verdict_may_win(t.verdict);
    EXPECT_TRUE(measured) << c.key << " = " << c.value;
  }
}

TEST(Tune, WinnerIsTheFastestTrialThatMayWinNeverARejectedOrFailedOne) {
  auto trial = [](TrialVerdict verdict, double img_per_s, std::string reason = "") {
    TuneTrial t;
    t.verdict = verdict;
    t.reason = std::move(reason);
    t.result.ok = verdict != TrialVerdict::failed;
    t.result.img_per_s = img_per_s;
    return t;
  };
  std::vector<TuneTrial> trials = {
      trial(TrialVerdict::baseline, 100), trial(TrialVerdict::kept, 120, "+20% vs the best so far"),
      trial(TrialVerdict::rejected, 300, "first-step loss changed by 0.03 relative (tolerance 1e-05)"),
      trial(TrialVerdict::failed, 0, "out of memory"), trial(TrialVerdict::pruned_slower, 80),
      trial(TrialVerdict::not_faster, 119)};
  for (size_t i = 0; i < trials.size(); ++i) trials[i].index = static_cast<int64_t>(i);
  EXPECT_EQ(tune_winner(trials), 1);
  trials[5].result.img_per_s = 121;  // timing noise favoured a trial the search did not keep: measured fastest, it wins
  EXPECT_EQ(tune_winner(trials), 5);
  trials[3].result.img_per_s = 500;  // a failed trial never wins, whatever it holds
  EXPECT_EQ(tune_winner(trials), 5);
  for (size_t i = 1; i < trials.size(); ++i) trials[i].verdict = TrialVerdict::rejected;
  EXPECT_EQ(tune_winner(trials), 0);  // nothing accepted: the configuration it started from

  // The reports print the verdict's name and its reason from the data, JSON as separate fields.
  TuneResult result;
  result.trials = trials;
  result.trials[2].change = "perf.amp=bf16";
  result.winner = 0;
  const std::string md = tune_markdown(result);
  EXPECT_NE(md.find("| rejected: first-step loss changed by 0.03 relative (tolerance 1e-05) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0 **winner** |"), std::string::npos) << md;
  const auto json = nlohmann::json::parse(tune_json(result));
  EXPECT_EQ(json["trials"][0]["verdict"], "baseline");
  EXPECT_EQ(json["trials"][2]["verdict"], "rejected");
  EXPECT_EQ(json["trials"][2]["reason"], "first-step loss changed by 0.03 relative (tolerance 1e-05)");
  EXPECT_EQ(json["trials"][4]["verdict"], "rejected");
  EXPECT_EQ(tune_verdict_text(trials[0]), "baseline");
  EXPECT_EQ(trial_verdict_name(TrialVerdict::pruned_slower), std::string("pruned_slower"));
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
  const test::TempDir tmp;
  const fs::path dir = tmp.path();
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
