// `fastloop tune`: finds the fastest settings for one model on this machine by measuring them. A
// greedy coordinate search over the loader, threads, AMP dtype, memory format, fused optimizer, cuDNN
// benchmark, CUDA graph and (only when allowed) batch size: each option is tried on top of the best
// configuration so far, kept when it is faster, and pruned when it loses clearly, so it is not tried
// again in later combinations. Every trial's first-step loss is checked against the baseline's within
// the tolerance the techniques are tested to; an option that exceeds it is rejected, never chosen.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/tune/trial.h"

#include <functional>
#include <string>
#include <vector>

namespace fastloop {

struct TuneOptions {
  TrainConfig base;                  // model, data, batch size, optimizer: everything not searched
  std::vector<int64_t> batch_sizes;  // empty: the batch size stays; else the candidates (LR scaled linearly)
  double budget_s = 300.0;           // no trial starts once this is spent (0: no limit)
  int64_t max_trials = 0;            // 0: no limit
  TrialOptions trial;
};

/// What the search decided about a trial. The winner and the choices' reasons are picked from this,
/// never from the text beside it.
enum class TrialVerdict {
  baseline,       // the configuration the search starts from
  kept,           // at least 2% faster than the best so far: the new best
  not_faster,     // within the timing noise of the best so far: the best stays
  pruned_slower,  // 15% slower or worse: not tried again in later combinations
  rejected,       // first-step loss beyond the option's tolerance: never chosen, not tried again
  failed,         // did not run (out of memory, an option this build or device lacks)
};

/// The verdict's name as the reports print it: "baseline", "kept", "not_faster", ….
const char* trial_verdict_name(TrialVerdict verdict);

/// Whether a trial with this verdict may be the winner: it ran and its loss stayed within tolerance.
bool trial_verdict_may_win(TrialVerdict verdict);

struct TuneTrial {
  int64_t index = 0;
  std::string key, value;            // the setting changed on top of the best so far; "" for the baseline
  std::string change;                // "baseline" or "key=value", for the reports
  TrainConfig config;
  TrialResult result;
  TrialVerdict verdict = TrialVerdict::baseline;
  std::string reason;                // the numbers behind the verdict, e.g. "+7% vs the best so far"
};

/// A setting of the winner with why it was chosen.
struct TuneChoice {
  std::string key, value, reason;
};

struct TuneResult {
  std::vector<TuneTrial> trials;
  int64_t winner = 0;                // index into trials: the fastest accepted trial
  std::vector<TuneChoice> choices;   // one per searched setting
  std::vector<std::string> notes;    // what was not searched or not finished, and why
  double seconds = 0.0;
  const TuneTrial& best() const { return trials.at(static_cast<size_t>(winner)); }
};

/// The index of the fastest trial that may win (trial_verdict_may_win); 0, the baseline, when none is faster.
int64_t tune_winner(const std::vector<TuneTrial>& trials);

/// "verdict: reason", or the verdict alone when it has no reason: the trial tables' verdict column.
std::string tune_verdict_text(const TuneTrial& trial);

/// Runs the search; `on_trial` (optional) hears of each trial as it ends.
TuneResult tune_run(const TuneOptions& options, const std::function<void(const TuneTrial&)>& on_trial = {});

/// Multiples of 8 near `batch_size` (half, same, double), for --batch-sizes auto.
std::vector<int64_t> tune_batch_sizes_near(int64_t batch_size);

std::string tune_markdown(const TuneResult& result);
std::string tune_json(const TuneResult& result);
/// The winner as a complete TOML recipe for `fastloop train --config`, each tuned choice commented.
std::string tune_recipe_toml(const TuneResult& result);

} // namespace fastloop
