// The training loop. It reads top-down: set up, then for each step of each epoch the step itself
// followed by the once-in-a-while blocks (log, checkpoint), then the evaluation at each epoch end.
#include "fastloop/train/trainer.h"

#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/loader.h"
#include "fastloop/data/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/metrics.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/step.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdio>

namespace fastloop {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

std::string checkpoint_path_in(const std::string& dir) { return dir + "/last.ckpt"; }

TrainSummary train(const TrainConfig& config, const TrainControl& control) {
  config_validate(config);
  threads_apply(config.run.threads);
  const DatasetSplits data = data_load(config.data.source);
  const int64_t num_classes = config.model.num_classes ? config.model.num_classes : data.train.num_classes;
  if (num_classes < data.train.num_classes)
    throw InputError("--num-classes " + std::to_string(num_classes) + " is fewer than the " +
                     std::to_string(data.train.num_classes) + " classes of " + config.data.source);

  torch::manual_seed(static_cast<uint64_t>(config.run.seed));
  Classifier model = model_make(ModelOptions(config.model.name)
                                    .stem(config.model.stem)
                                    .in_channels(data.train.channels())
                                    .num_classes(num_classes));
  auto optimizer = optimizer_make(config.optim, model->parameters());

  LoaderOptions loader_options;
  loader_options.batch_size = config.data.batch_size;
  loader_options.workers = config.data.workers;
  loader_options.prefetch = config.data.prefetch;
  loader_options.augment = {config.data.augment, config.data.crop_pad, config.data.augment && config.data.flip};
  loader_options.sampler.seed = static_cast<uint64_t>(config.run.seed);
  Loader loader(data.train, loader_options);

  const int64_t batches = loader.batches_per_epoch();
  if (batches == 0)
    throw InputError("--batch-size " + std::to_string(config.data.batch_size) + " is larger than the " +
                     std::to_string(data.train.size()) + " training samples of " + config.data.source);
  int64_t total_steps = config.run.epochs * batches;
  if (config.run.max_steps > 0) total_steps = std::min(total_steps, config.run.max_steps);
  const LrSchedule schedule(config.schedule, config.optim.lr, total_steps, batches);
  const std::string config_json = config_to_json(config);

  TrainPosition position;
  const std::string checkpoint = config.run.checkpoint_dir.empty() ? "" : checkpoint_path_in(config.run.checkpoint_dir);
  if (config.run.resume) {
    auto saved = Checkpoint::read(checkpoint);
    saved.restore(*model, optimizer.get());
    position = saved.position();
    std::printf("resumed from %s at epoch %lld, step %lld\n", checkpoint.c_str(),
                static_cast<long long>(position.epoch + 1), static_cast<long long>(position.step));
  }
  auto save = [&] {
    if (!checkpoint.empty()) checkpoint_save(checkpoint, *model, optimizer.get(), position, config_json);
  };

  Progress progress(control.progress);
  MetricsWriter metrics(config.run.metrics);
  TrainSummary summary;
  const auto run_start = Clock::now();
  double train_seconds = 0.0;
  int64_t images_trained = 0;

  bool done = position.step >= total_steps;
  while (!done && position.epoch < config.run.epochs) {
    model->train();
    loader.start_epoch(position.epoch, position.batch);
    at::Tensor loss_sum = at::zeros({}), epoch_loss_sum = at::zeros({});
    int64_t interval_steps = 0, interval_images = 0, epoch_steps = 0, epoch_images = 0;
    double data_wait = 0.0;
    auto interval_start = Clock::now(), epoch_start = Clock::now();

    for (;;) {
      const auto wait_start = Clock::now();
      auto batch = loader.next();
      data_wait += seconds_since(wait_start);
      if (!batch) break;

      // --- the step ---
      const double lr = schedule.lr_at(position.step);
      optimizer_set_lr(*optimizer, lr);
      auto loss = train_step(*model, *optimizer, batch->images, batch->labels, config.optim.label_smoothing);
      loss_sum += loss;
      epoch_loss_sum += loss;
      ++position.step, ++position.batch, ++interval_steps, ++epoch_steps;
      interval_images += batch->labels.size(0);
      done = position.step >= total_steps;
      const bool stop = control.should_stop && control.should_stop(position);

      // --- once in a while: report progress ---
      if (position.step % config.run.log_every == 0 || position.batch == batches || done || stop) {
        const double interval_s = seconds_since(interval_start);
        StepReport report{position.epoch, config.run.epochs, position.batch, batches, position.step,
                          loss_sum.item<double>() / static_cast<double>(interval_steps),
                          static_cast<double>(interval_images) / interval_s, seconds_since(run_start), lr, data_wait};
        progress.step(report);
        if (position.step % config.run.log_every == 0) metrics.step(report);
        loss_sum.zero_();
        interval_steps = interval_images = 0;
        data_wait = 0.0;
        interval_start = Clock::now();
      }
      images_trained += batch->labels.size(0);
      epoch_images += batch->labels.size(0);
      // --- once in a while: checkpoint ---
      if (config.run.checkpoint_every > 0 && position.step % config.run.checkpoint_every == 0) save();
      if (stop) {
        save();
        summary.stopped = true;
        break;
      }
      if (done) break;
    }
    loader.stop();
    const double epoch_train_s = seconds_since(epoch_start);
    train_seconds += epoch_train_s;
    if (summary.stopped) break;

    // --- each epoch end: evaluate, report, checkpoint ---
    summary.test = evaluate(*model, data.test, config.data.batch_size, config.data.workers);
    EpochReport report{position.epoch, position.step,
                       epoch_steps ? epoch_loss_sum.item<double>() / static_cast<double>(epoch_steps) : 0.0,
                       summary.test.loss, summary.test.accuracy,
                       static_cast<double>(epoch_images) / epoch_train_s,
                       seconds_since(run_start)};
    progress.epoch(report, config.run.epochs);
    metrics.epoch(report);
    ++position.epoch;
    position.batch = 0;
    save();
  }
  if (!summary.stopped && summary.test.samples == 0) {  // nothing left to train: still report accuracy
    summary.test = evaluate(*model, data.test, config.data.batch_size, config.data.workers);
  }
  summary.position = position;
  summary.train_seconds = train_seconds;
  summary.img_per_s = train_seconds > 0 ? static_cast<double>(images_trained) / train_seconds : 0.0;
  return summary;
}

} // namespace fastloop
