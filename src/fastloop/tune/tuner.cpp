// The search of `fastloop tune`.
#include "fastloop/tune/tuner.h"

#include "fastloop/core/clock.h"
#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/core/config_text.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace fastloop {

namespace {

constexpr double kKeepGain = 1.02;   // an option must be 2% faster to replace the best (timing noise)
constexpr double kPruneLoss = 0.85;  // 15% slower or worse: never tried again in later combinations

struct Dimension {
  std::string key;                   // TOML key of the setting
  std::vector<std::string> values;
  double tolerance;                  // allowed relative change of the first-step loss (techniques' tests)
  std::string why;                   // what the setting does, for the recipe's comments
};

std::vector<Dimension> dimensions(const TuneOptions& options, bool cuda) {
  const int64_t cores = usable_cores();
  std::vector<Dimension> dims;
  std::vector<std::string> workers;
  for (int64_t w : {0, 1, 2, 4, 8})
    if (w <= std::max<int64_t>(2, cores)) workers.push_back(std::to_string(w));
  dims.push_back({"data.workers", workers, 1e-5, "loader threads assembling batches beside the step"});
  dims.push_back({"data.prefetch", {"2", "4", "8"}, 1e-5, "batches assembled ahead of the step"});
  const std::string& source = options.base.data.source;
  const bool encoded = !data_in_memory(source);
  if (!encoded)  // image files are decoded by the loader's workers: there is no uint8 tensor to keep on the device
    dims.push_back({"data.on_device", {"false", "true"}, 1e-5, "the whole uint8 dataset on the device, augmented there"});
  std::set<int64_t> threads{cores, std::max<int64_t>(1, cores - 1), std::max<int64_t>(1, cores / 2)};
  std::vector<std::string> thread_values;
  for (auto it = threads.rbegin(); it != threads.rend(); ++it) thread_values.push_back(std::to_string(*it));
  dims.push_back({"run.threads", thread_values, 1e-5, "compute threads; the rest of the cores are left to the loader"});
  std::vector<std::string> amp{"off", "bf16"};
  if (cuda) amp.push_back("fp16");
  dims.push_back({"perf.amp", amp, 1e-2, "autocast dtype (bf16 loss within 1e-2 of fp32, tested)"});
  dims.push_back({"perf.channels_last", {"false", "true"}, 1e-5, "NHWC parameters and batches"});
  dims.push_back({"perf.fused_optim", {"false", "true"}, 1e-5, "one fused kernel for the optimizer update"});
  if (cuda) {
    dims.push_back({"perf.cudnn_benchmark", {"false", "true"}, 1e-5, "cuDNN times its algorithms once"});
    dims.push_back({"perf.cuda_graph", {"false", "true"}, 1e-5, "the training step replayed as one CUDA graph"});
  }
  if (!options.batch_sizes.empty()) {
    std::vector<std::string> sizes;
    for (int64_t b : options.batch_sizes) sizes.push_back(std::to_string(b));
    // Not compared by loss: a different batch sees different images. The LR scales with it instead.
    dims.push_back({"data.batch_size", sizes, INFINITY, "images per step; the learning rate scaled linearly with it"});
  }
  return dims;
}

std::string percent(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.0f%%", (ratio - 1.0) * 100.0);
  return text;
}

}  // namespace

std::vector<int64_t> tune_batch_sizes_near(int64_t batch_size) {
  std::set<int64_t> sizes;
  for (double f : {0.5, 1.0, 2.0}) sizes.insert(std::max<int64_t>(8, std::llround(batch_size * f / 8.0) * 8));
  return {sizes.begin(), sizes.end()};
}

bool trial_verdict_may_win(TrialVerdict verdict) {
  return verdict != TrialVerdict::rejected && verdict != TrialVerdict::failed;
}

int64_t tune_winner(const std::vector<TuneTrial>& trials) {
  // The fastest that may win: the greedy best, unless timing noise favoured another accepted trial.
  int64_t winner = 0;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trial_verdict_may_win(trials[i].verdict) &&
        trials[i].result.img_per_s > trials[static_cast<size_t>(winner)].result.img_per_s)
      winner = static_cast<int64_t>(i);
  return winner;
}

namespace {

/// A search in progress: the trials so far, the best configuration and the options pruned. tune_run()
/// calls its phases in order: the baseline, up to two passes over the dimensions, the explanation.
class Search {
 public:
  Search(TuneOptions options, const std::function<void(const TuneTrial&)>& on_trial)
      : options_(std::move(options)), on_trial_(on_trial), best_config_(options_.base) {
    best_config_.perf.mode = "manual";
    cuda_ = options_.base.perf.device == "cuda" || (options_.base.perf.device == "auto" && torch::cuda::is_available());
    dims_ = dimensions(options_, cuda_);
  }

  /// The configuration as given: the reference speed and first-step loss of every later trial.
  void baseline() {
    TuneTrial& baseline = run("", "", best_config_);  // a reference only until the next run()
    if (!baseline.result.ok)
      throw InputError("tune: the configuration to start from fails: " + baseline.result.failure + "; fix it first");
    baseline.verdict = TrialVerdict::baseline;
    best_img_per_s_ = baseline.result.img_per_s;
    baseline_loss_ = baseline.result.first_loss;
    if (on_trial_) on_trial_(baseline);
  }

  /// Every value of every dimension not yet tried next to the best; true when one was kept.
  bool pass() {
    bool improved = false;
    for (const auto& dim : dims_) {
      for (const auto& value : dim.values) {
        if (value == config_field_text(best_config_, dim.key) || pruned_.count({dim.key, value})) continue;
        if (!budget_left()) {
          out_of_budget_ = true;
          return improved;
        }
        TrainConfig candidate = best_config_;
        config_field_set(candidate, dim.key, value);
        if (dim.key == "data.batch_size")
          candidate.optim.lr = options_.base.optim.lr * static_cast<double>(candidate.data.batch_size) /
                               static_cast<double>(options_.base.data.batch_size);
        TuneTrial& trial = run(dim.key, value, candidate);
        improved |= judge(trial);
        if (on_trial_) on_trial_(trial);
      }
    }
    return improved;
  }

  bool out_of_budget() const { return out_of_budget_; }

  /// The winner, one choice per dimension with its reason, and the notes on what was not searched.
  TuneResult finish() {
    result_.winner = tune_winner(result_.trials);
    for (const auto& dim : dims_) result_.choices.push_back(choice(dim));
    const TuneTrial& winner = result_.best();
    const int64_t base_batch = options_.base.data.batch_size;
    if (winner.config.data.batch_size != base_batch) {
      char text[160];
      std::snprintf(text, sizeof(text), "batch size %lld instead of %lld: the learning rate was scaled linearly to %g",
                    static_cast<long long>(winner.config.data.batch_size), static_cast<long long>(base_batch),
                    winner.config.optim.lr);
      result_.notes.push_back(text);
    }
    result_.notes.push_back("not searched: --accumulate (with BatchNorm, micro-batches see other batch statistics: "
                            "results change beyond 1e-5) and --tf32 (fp32 matmuls rounded to 10-bit mantissas)");
    if (!cuda_) result_.notes.push_back("not searched on a CPU: --cudnn-benchmark and --cuda-graph (CUDA only)");
    if (options_.batch_sizes.empty()) result_.notes.push_back("batch size kept: pass --batch-sizes LIST or auto to search it");
    if (out_of_budget_) result_.notes.push_back("the budget ran out before every option was tried");
    result_.seconds = seconds_since(start_);
    return std::move(result_);
  }

 private:
  TuneTrial& run(const std::string& key, const std::string& value, const TrainConfig& config) {
    TuneTrial trial;
    trial.index = static_cast<int64_t>(result_.trials.size());
    trial.key = key;
    trial.value = value;
    trial.change = key.empty() ? "baseline" : key + "=" + value;
    trial.config = config;
    trial.result = trial_run(config, options_.trial);
    result_.trials.push_back(trial);
    return result_.trials.back();
  }

  bool budget_left() const {
    if (options_.max_trials > 0 && static_cast<int64_t>(result_.trials.size()) >= options_.max_trials) return false;
    if (options_.budget_s <= 0) return true;
    // A trial is not started when the last one's length would overrun the budget.
    const double last = result_.trials.empty() ? 0.0 : result_.trials.back().result.seconds;
    return seconds_since(start_) + last <= options_.budget_s;
  }

  /// The trial's verdict against the best so far; true when it becomes the best.
  bool judge(TuneTrial& trial) {
    const double ratio = trial.result.ok ? trial.result.img_per_s / best_img_per_s_ : 0.0;
    const double loss_change =
        std::abs(trial.result.first_loss - baseline_loss_) / std::max(std::abs(baseline_loss_), 1e-12);
    // Compared with the starting configuration, every setting that differs from it may contribute
    // its own tolerance (bf16 kept earlier allows 1e-2 for all later combinations with it).
    double tolerance = 0.0;
    for (const auto& d : dims_)
      if (config_field_text(trial.config, d.key) != config_field_text(options_.base, d.key))
        tolerance = std::max(tolerance, d.tolerance);
    const std::pair<std::string, std::string> option{trial.key, trial.value};
    if (!trial.result.ok) {
      trial.verdict = TrialVerdict::failed;
      trial.reason = trial.result.failure;
      pruned_.insert(option);
    } else if (!(loss_change <= tolerance)) {
      char text[160];
      std::snprintf(text, sizeof(text), "first-step loss changed by %.2g relative (tolerance %.0g)", loss_change,
                    tolerance);
      trial.verdict = TrialVerdict::rejected;
      trial.reason = text;
      pruned_.insert(option);
    } else if (ratio >= kKeepGain) {
      trial.verdict = TrialVerdict::kept;
      trial.reason = percent(ratio) + " vs the best so far";
      best_config_ = trial.config;
      best_img_per_s_ = trial.result.img_per_s;
      return true;
    } else {
      trial.verdict = ratio < kPruneLoss ? TrialVerdict::pruned_slower : TrialVerdict::not_faster;
      trial.reason = percent(ratio) + " vs the best so far";
      if (ratio < kPruneLoss) pruned_.insert(option);
    }
    return false;
  }

  /// The winner's value of `dim` and why: what it gained, and what the other values it tried got.
  TuneChoice choice(const Dimension& dim) const {
    const TuneTrial& winner = result_.best();
    const double base = result_.trials[0].result.img_per_s;
    const std::string value = config_field_text(winner.config, dim.key);
    std::string reason;
    if (value == config_field_text(options_.base, dim.key)) {
      reason = "kept as given: no alternative tried was faster";
    } else {
      char text[200];
      std::snprintf(text, sizeof(text), "%s: %.0f img/s vs %.0f at the baseline (%s)", dim.why.c_str(),
                    winner.result.img_per_s, base, percent(winner.result.img_per_s / base).c_str());
      reason = text;
    }
    std::vector<std::string> lost;
    for (const auto& trial : result_.trials)
      if (trial.key == dim.key && trial.verdict != TrialVerdict::kept)
        lost.push_back(trial.value + " " + tune_verdict_text(trial));
    for (size_t i = 0; i < lost.size(); ++i) reason += (i ? "; " : "; tried ") + lost[i];
    return {dim.key, value, reason};
  }

  TuneOptions options_;
  const std::function<void(const TuneTrial&)>& on_trial_;
  Clock::time_point start_ = Clock::now();
  bool cuda_ = false;
  std::vector<Dimension> dims_;
  TuneResult result_;
  TrainConfig best_config_;
  double best_img_per_s_ = 0.0, baseline_loss_ = 0.0;
  std::set<std::pair<std::string, std::string>> pruned_;
  bool out_of_budget_ = false;
};

}  // namespace

TuneResult tune_run(const TuneOptions& given, const std::function<void(const TuneTrial&)>& on_trial) {
  config_validate(given.base);
  for (int64_t b : given.batch_sizes)
    if (b < 8 || b % 8 != 0)
      throw InputError("--batch-sizes: " + std::to_string(b) + " is not a multiple of 8 (tensor cores and vector units want them)");
  TuneOptions options = given;
  if (options.base.run.threads == 0) options.base.run.threads = usable_cores();  // what 0 means, spelled out
  Search search(std::move(options), on_trial);
  search.baseline();
  // A second pass only re-tries options next to a changed best.
  for (int pass = 0; pass < 2 && !search.out_of_budget(); ++pass)
    if (!search.pass()) break;
  return search.finish();
}

} // namespace fastloop
