// `fastloop eval --checkpoint FILE`: accuracy and loss of a checkpoint on a test split; or, with
// `--init-from model.safetensors --model NAME --data SRC`, of weights made elsewhere (e.g. in PyTorch);
// `--image-size`, `--mean`, `--std` give image folders and shards the crop and normalisation they need.
#include "commands.h"

#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/source.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"

#include <cstdio>
#include <memory>
#include <optional>

namespace fastloop {

namespace {
struct EvalFlags {
  std::string checkpoint;
  std::string init_from;   // safetensors weights instead of a checkpoint; then model/stem/classes below
  std::string model;
  std::string stem = "cifar";
  int64_t num_classes = 0;  // 0: the data's
  std::string data;        // empty: the data the checkpoint was trained on
  int64_t batch_size = 0;  // 0: the checkpoint's
  int64_t image_size = 0;  // image folders / shards: 0 the checkpoint's (224 with --init-from)
  std::string mean, std;   // "R,G,B"; empty: the checkpoint's (the dataset's own with --init-from)
  int64_t workers = 1;
  int64_t threads = 0;
  bool fold_bn = false;
};
}  // namespace

Subcommand eval_command(CLI::App& root, TrainConfig& config) {
  auto* app = root.add_subcommand("eval", "Evaluate a checkpoint, or safetensors weights, on the test split");
  auto flags = std::make_shared<EvalFlags>();
  auto* checkpoint = app->add_option("--checkpoint", flags->checkpoint, "checkpoint file written by train");
  app->add_option("--init-from", flags->init_from,
                  "safetensors weights (PyTorch state_dict names) instead of a checkpoint; needs --model and --data")
      ->excludes(checkpoint);
  app->add_option("--model", flags->model, "with --init-from: the model the weights are for");
  app->add_option("--stem", flags->stem, "with --init-from: cifar | imagenet")->capture_default_str();
  app->add_option("--num-classes", flags->num_classes, "with --init-from: classes (0: the data's)")
      ->check(CLI::NonNegativeNumber);
  app->add_option("--data", flags->data, "dataset (default: the one the checkpoint was trained on)");
  app->add_option("--batch-size", flags->batch_size, "images per batch (default: the checkpoint's)")
      ->check(CLI::PositiveNumber);
  app->add_option("--image-size", flags->image_size,
                  "image folders / shards: crop side (default: the checkpoint's; 224 with --init-from)")
      ->check(CLI::Range(8, 4096));
  app->add_option("--mean", flags->mean, "image folders / shards: per-channel mean R,G,B in [0, 1] (default: the checkpoint's)");
  app->add_option("--std", flags->std, "image folders / shards: per-channel std R,G,B (default: the checkpoint's)");
  app->add_option("--workers", flags->workers, "loader threads")->check(CLI::Range(0, 256))->capture_default_str();
  app->add_flag("--fold-bn", flags->fold_bn, "fold each BatchNorm into the conv before it (same results, one pass less)");
  app->add_option("--threads", flags->threads, "intra-op threads (0: all usable cores)")->check(CLI::NonNegativeNumber);
  return {app, [flags, &config] {
            std::optional<Checkpoint> checkpoint;
            if (!flags->checkpoint.empty()) {
              checkpoint.emplace(Checkpoint::read(flags->checkpoint));
              config_from_json(config, checkpoint->config_json());
            } else if (flags->init_from.empty() || flags->model.empty() || flags->data.empty()) {
              throw InputError("eval needs --checkpoint FILE, or --init-from FILE with --model NAME and --data SOURCE");
            } else {
              config.model.name = flags->model;
              config.model.stem = flags->stem;
              config.model.num_classes = flags->num_classes;
            }
            if (!flags->data.empty()) config.data.source = flags->data;
            if (flags->batch_size) config.data.batch_size = flags->batch_size;
            if (flags->image_size) config.data.image_size = flags->image_size;
            if (!flags->mean.empty()) config.data.mean = flags->mean;
            if (!flags->std.empty()) config.data.std = flags->std;
            threads_apply(flags->threads);
            const DatasetSplits data = data_load(config.data);
            Classifier model = model_make_for(config.model, data.test.channels(), data.test.num_classes);
            if (checkpoint) checkpoint->restore(*model, nullptr, /*rng=*/false);
            else model_state_load_file(*model, flags->init_from);  // strict: every name and shape must match
            EvalOptions options;
            options.fold_bn = flags->fold_bn;
            const EvalResult result = evaluate(*model, data.test, config.data.batch_size, flags->workers, options);
            std::printf("test accuracy %.2f%% (loss %.4f, %lld images, %.1f s) %s on %s\n", 100.0 * result.accuracy,
                        result.loss, static_cast<long long>(result.samples), result.seconds,
                        checkpoint ? flags->checkpoint.c_str() : flags->init_from.c_str(), config.data.source.c_str());
            return 0;
          }};
}

} // namespace fastloop
