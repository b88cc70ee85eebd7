// `fastloop train`: runs the training loop; Ctrl-C or SIGTERM stops after the current step with a checkpoint.
// The executable's `train` subcommand and train_main() (a user's own program) both end up in train_run().
#include "fastloop/run/train_main.h"

#include "fastloop/run/config_flags.h"
#include "fastloop/run/exit_code.h"
#include "fastloop/data/sources/http_fetch.h"
#include "fastloop/dist/dist_env.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <signal.h>
#include <cstdio>

namespace fastloop {

namespace {
std::atomic<bool> g_stop_requested{false};  // set from a signal handler, so it cannot live in a struct
extern "C" void request_stop(int) {
  g_stop_requested = true;  // first: a fetch cancelled below is then seen as part of the stop
  fetch_interrupt_all();    // remote shards: fetches outside the loader's wait (setup) stop too
}

void summary_print(const TrainSummary& summary) {
  if (summary.world_size > 1)
    std::printf("ddp: rank %lld of %lld, %lld buckets, %lld all-reduces, %.3f s communicating, %.3f s waited (%.0f%% hidden by backward)\n",
                static_cast<long long>(summary.rank), static_cast<long long>(summary.world_size),
                static_cast<long long>(summary.buckets), static_cast<long long>(summary.allreduces),
                summary.comm_span_s, summary.comm_exposed_s,
                summary.comm_span_s > 0 ? 100.0 * std::max(0.0, 1.0 - summary.comm_exposed_s / summary.comm_span_s) : 0.0);
  if (summary.rank != 0) return;
  std::printf("test accuracy %.2f%% (loss %.4f, %lld images) after %lld steps, %.1f s training, %.0f img/s, "
              "%.1f s in all; test-time augmentation: %s\n",
              100.0 * summary.test.accuracy, summary.test.loss, static_cast<long long>(summary.test.samples),
              static_cast<long long>(summary.position.step), summary.train_seconds, summary.img_per_s,
              summary.elapsed_seconds, summary.test.tta.c_str());
}

/// SIGINT and SIGTERM request a stop while it lives; the handlers before it come back after it (a Python
/// interpreter's, whose Ctrl-C must raise KeyboardInterrupt again once fastloop.train returns).
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop_requested = false;  // a second run in this process starts afresh
    fetch_interrupt_clear();
    struct sigaction action {};
    action.sa_handler = request_stop;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    fetch_interrupt_clear();  // the stop ended this run: a Loader made later in this process fetches again
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

TrainSummary train_run(TrainConfig& config, const std::set<std::string>& given, bool quiet) {
  std::vector<std::string> choices;  // --perf auto's, printed once train() has validated the config
  TrainControl control;
  if (config.perf.mode == "auto") {
    const PerfHardware hardware = perf_hardware_detect();
    choices = perf_auto_apply(config, hardware, given);
    control.amp_candidates = perf_auto_amp_candidates(config, hardware, given);
  }
  StopOnSignals signals;
  control.on_start = [&](const TrainConfig& checked) {
    if (quiet) return;
    for (const auto& line : choices) std::printf("perf auto: %s\n", line.c_str());
    if (dist_env_detect().rank == 0) std::printf("config %s\n", config_to_json(checked).c_str());  // rank 0 reports
  };
  control.should_stop = [](const TrainPosition&) { return g_stop_requested.load(); };
  control.progress = !quiet;
  TrainSummary summary;
  try {
    summary = train(config, control);
  } catch (const FetchCancelled&) {
    if (!g_stop_requested.load()) throw;
    summary.stopped = true;  // Ctrl-C reached a shard fetch before the first step (calibration, whitening)
  }
  if (quiet) return summary;
  if (summary.stopped) {
    std::printf("stopped at step %lld%s\n", static_cast<long long>(summary.position.step),
                config.run.checkpoint_dir.empty() ? "" : "; --resume continues from the checkpoint");
  } else {
    summary_print(summary);
  }
  std::fflush(stdout);
  return summary;
}

int train_main(int argc, char** argv) {
  CLI::App app{"Train a model with fastloop's loop (the flags of `fastloop train`)"};
  TrainConfig config;
  std::string recipe = config_recipe_from_args(argc, argv);
  app.add_option("--config", recipe, "TOML recipe; flags given with it override it");
  config_flags_add(app, config);
  return exit_code_run([&] {
    if (!recipe.empty()) config_load_toml(config, recipe);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e) == 0 ? 0 : 2;
    }
    return train_exit_code(train_run(config, config_flags_given(app, config)));
  });
}

} // namespace fastloop
