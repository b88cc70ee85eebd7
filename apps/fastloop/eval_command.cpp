// `fastloop eval --checkpoint FILE`: accuracy and loss of a checkpoint on a test split; or, with
// `--init-from model.safetensors --model NAME --data SRC`, of weights made elsewhere (e.g. in PyTorch);
// `--image-size`, `--mean`, `--std` give image folders and shards the crop and normalisation they need.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/run/eval_run.h"
#include "fastloop/core/out_file.h"
#include "fastloop/train/tta.h"

#include <cstdio>
#include <memory>

namespace fastloop {

Subcommand eval_command(CLI::App& root, TrainConfig& config) {
  (void)config;  // eval reads its settings from the checkpoint
  auto* app = root.add_subcommand("eval", "Evaluate a checkpoint, or safetensors weights, on the test split");
  auto flags = std::make_shared<EvalRequest>();
  auto out = std::make_shared<std::string>();
  auto* checkpoint = app->add_option("--checkpoint", flags->checkpoint, "checkpoint file written by train");
  app->add_option("--init-from", flags->init_from,
                  "safetensors weights (PyTorch state_dict names) instead of a checkpoint; needs --model and --data")
      ->excludes(checkpoint);
  app->add_option("--model", flags->model, "with --init-from: the model the weights are for");
  app->add_option("--stem", flags->stem, "with --init-from: cifar | imagenet")->capture_default_str();
  app->add_option("--num-classes", flags->num_classes, "with --init-from: classes (0: the data's)")
      ->check(kNonNegative);
  app->add_option("--data", flags->data, "dataset (default: the one the checkpoint was trained on)");
  app->add_option("--batch-size", flags->batch_size, "images per batch (default: the checkpoint's)")
      ->check(kPositive);
  app->add_option("--image-size", flags->image.size,
                  "image folders / shards: crop side (default: the checkpoint's; 224 with --init-from)")
      ->check(CLI::Range(8, 4096));
  app->add_option("--mean", flags->image.mean, "image folders / shards: per-channel mean R,G,B in [0, 1] (default: the checkpoint's)");
  app->add_option("--std", flags->image.std, "image folders / shards: per-channel std R,G,B (default: the checkpoint's)");
  app->add_option("--workers", flags->workers, "loader threads")->check(CLI::Range(0, 256))->capture_default_str();
  app->add_option("--tta", flags->tta, "test-time augmentation: off, flip, flip-translate (default: the checkpoint's)")
      ->check(CLI::IsMember(tta_modes()));
  app->add_flag("--fold-bn", flags->fold_bn, "fold each BatchNorm into the conv before it (same results, one pass less)");
  app->add_option("--threads", flags->threads, "intra-op threads (0: all usable cores)")->check(kNonNegative);
  app->add_option("--out", *out, "also write FILE.json: accuracy, loss, per-class accuracy, confusion matrix");
  return {app, [flags, out] {
            const EvalRun run = eval_run(*flags);
            std::printf("test accuracy %.2f%% (loss %.4f, %lld images, %.1f s) %s on %s; test-time augmentation: %s\n",
                        100.0 * run.result.accuracy, run.result.loss, static_cast<long long>(run.result.samples),
                        run.result.seconds, run.model.c_str(), run.data.c_str(), run.result.tta.c_str());
            for (const auto& [name, accuracy] : eval_per_class(run))
              std::printf("  %-24s %6.2f%%\n", name.c_str(), 100.0 * accuracy);
            if (!out->empty()) out_file_write(*out, eval_run_json(run));
            return 0;
          }};
}

} // namespace fastloop
