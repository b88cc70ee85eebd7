// One timed trial.
#include "fastloop/tune/trial.h"

#include "fastloop/core/stats.h"
#include "fastloop/train/faults.h"
#include "fastloop/train/trainer.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace fastloop {

TrialResult trial_run(TrainConfig config, const TrialOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int64_t steps = options.warmup_steps + options.timed_steps;
  config.run.log_every = 1;  // one report per step: its time and the first step's loss
  config.run.max_steps = steps;
  config.run.epochs = std::max<int64_t>(config.run.epochs, steps);  // small datasets: epochs roll over
  config.run.checkpoint_dir.clear();
  config.run.metrics.clear();
  config.run.resume = "off";

  std::vector<double> step_ends;  // elapsed seconds at each step
  TrialResult result;
  TrainControl control;
  control.progress = false;
  control.on_report = [&](const StepReport& report) {
    if (step_ends.empty()) result.first_loss = report.train_loss;
    step_ends.push_back(report.elapsed_s);
  };
  // Stopping through the control ends the run before the epoch's evaluation.
  control.should_stop = [steps](const TrainPosition& position) { return position.step >= steps; };
  try {
    train(config, control);
  } catch (const c10::Error& e) {  // the trainer turns what it can into RunError/InputError, caught below
    result.failure = is_out_of_memory(e) ? "out of memory" : e.what_without_backtrace();
  } catch (const std::exception& e) {
    result.failure = e.what();
  }
  if (result.failure.empty() && static_cast<int64_t>(step_ends.size()) < steps)
    result.failure = "ran " + std::to_string(step_ends.size()) + " of " + std::to_string(steps) + " steps";
  if (result.failure.empty()) {
    std::vector<double> times;
    // The first step's time is set-up; warm-up steps are dropped as well (warmup_steps >= 1).
    for (size_t i = static_cast<size_t>(std::max<int64_t>(1, options.warmup_steps)); i < step_ends.size(); ++i)
      times.push_back(step_ends[i] - step_ends[i - 1]);
    result.step_s = median(times);
    const double images = static_cast<double>(config.data.batch_size * config.perf.accumulate);
    result.img_per_s = result.step_s > 0 ? images / result.step_s : 0.0;
    result.ok = true;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace fastloop
