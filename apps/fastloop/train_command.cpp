// `fastloop train`: runs the training loop; Ctrl-C or SIGTERM stops after the current step with a checkpoint.
#include "commands.h"

#include "fastloop/dist/dist_env.h"
#include "fastloop/train/perf_auto.h"
#include "fastloop/train/trainer.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>

namespace fastloop {

namespace {
std::atomic<bool> g_stop_requested{false};  // set from a signal handler, so it cannot live in a struct
extern "C" void request_stop(int) { g_stop_requested = true; }
}  // namespace

Subcommand train_command(CLI::App& root, TrainConfig& config, std::string& recipe) {
  auto* app = root.add_subcommand("train", "Train a model (no flags: the default Fashion-MNIST recipe)");
  app->add_option("--config", recipe, "TOML recipe (see recipes/); flags given with it override it");
  config_flags_add(*app, config);
  return {app, [&config] {
            std::signal(SIGINT, request_stop);
            std::signal(SIGTERM, request_stop);
            config_validate(config);  // before any output or work
            if (config.perf.mode == "auto")
              for (const auto& line : perf_auto_apply(config, perf_hardware_detect())) std::printf("perf auto: %s\n", line.c_str());
            const bool main_rank = dist_env_detect().rank == 0;  // distributed runs: rank 0 reports
            if (main_rank) std::printf("config %s\n", config_to_json(config).c_str());
            TrainControl control;
            control.should_stop = [](const TrainPosition&) { return g_stop_requested.load(); };
            const TrainSummary summary = train(config, control);
            if (summary.stopped) {
              std::printf("stopped at step %lld%s\n", static_cast<long long>(summary.position.step),
                          config.run.checkpoint_dir.empty() ? "" : "; --resume continues from the checkpoint");
              return 130;
            }
            if (summary.world_size > 1)
              std::printf("ddp: rank %lld of %lld, %lld buckets, %lld all-reduces, %.3f s communicating, %.3f s waited (%.0f%% hidden by backward)\n",
                          static_cast<long long>(summary.rank), static_cast<long long>(summary.world_size),
                          static_cast<long long>(summary.buckets), static_cast<long long>(summary.allreduces),
                          summary.comm_span_s, summary.comm_exposed_s,
                          summary.comm_span_s > 0 ? 100.0 * std::max(0.0, 1.0 - summary.comm_exposed_s / summary.comm_span_s) : 0.0);
            if (!main_rank) return 0;
            std::printf("test accuracy %.2f%% (loss %.4f, %lld images) after %lld steps, %.1f s training, %.0f img/s\n",
                        100.0 * summary.test.accuracy, summary.test.loss, static_cast<long long>(summary.test.samples),
                        static_cast<long long>(summary.position.step), summary.train_seconds, summary.img_per_s);
            return 0;
          }};
}

} // namespace fastloop
