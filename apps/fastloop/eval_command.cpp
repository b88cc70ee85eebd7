// `fastloop eval --checkpoint FILE`: accuracy and loss of a checkpoint on a test split.
#include "commands.h"

#include "fastloop/core/env.h"
#include "fastloop/data/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct EvalFlags {
  std::string checkpoint;
  std::string data;        // empty: the data the checkpoint was trained on
  int64_t batch_size = 0;  // 0: the checkpoint's
  int64_t workers = 1;
  int64_t threads = 0;
};
}  // namespace

Subcommand eval_command(CLI::App& root, TrainConfig& config) {
  auto* app = root.add_subcommand("eval", "Evaluate a checkpoint on the test split");
  auto flags = std::make_shared<EvalFlags>();
  app->add_option("--checkpoint", flags->checkpoint, "checkpoint file written by train")->required();
  app->add_option("--data", flags->data, "dataset (default: the one the checkpoint was trained on)");
  app->add_option("--batch-size", flags->batch_size, "images per batch (default: the checkpoint's)")
      ->check(CLI::PositiveNumber);
  app->add_option("--workers", flags->workers, "loader threads")->check(CLI::Range(0, 256))->capture_default_str();
  app->add_option("--threads", flags->threads, "intra-op threads (0: all usable cores)")->check(CLI::NonNegativeNumber);
  return {app, [flags, &config] {
            auto checkpoint = Checkpoint::read(flags->checkpoint);
            config_from_json(config, checkpoint.config_json());
            if (!flags->data.empty()) config.data.source = flags->data;
            if (flags->batch_size) config.data.batch_size = flags->batch_size;
            threads_apply(flags->threads);
            const DatasetSplits data = data_load(config.data.source);
            const int64_t classes = config.model.num_classes ? config.model.num_classes : data.test.num_classes;
            Classifier model = model_make(ModelOptions(config.model.name)
                                              .stem(config.model.stem)
                                              .in_channels(data.test.channels())
                                              .num_classes(classes));
            checkpoint.restore(*model, nullptr, /*rng=*/false);
            const EvalResult result = evaluate(*model, data.test, config.data.batch_size, flags->workers);
            std::printf("test accuracy %.2f%% (loss %.4f, %lld images, %.1f s) %s on %s\n", 100.0 * result.accuracy,
                        result.loss, static_cast<long long>(result.samples), result.seconds,
                        flags->checkpoint.c_str(), config.data.source.c_str());
            return 0;
          }};
}

} // namespace fastloop
