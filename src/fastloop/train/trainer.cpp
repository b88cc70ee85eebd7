// The training loop. It reads top-down: set up, then for each batch the micro-step, and at the end
// of each accumulation cycle the optimizer step followed by the once-in-a-while blocks (log,
// checkpoint), then the evaluation at each epoch end.
#include "fastloop/train/trainer.h"

#include "fastloop/core/errors.h"
#include "fastloop/data/loader.h"
#include "fastloop/data/source.h"
#include "fastloop/dist/ddp.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/cuda_graph.h"
#include "fastloop/train/faults.h"
#include "fastloop/train/metrics.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/step.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace fastloop {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
// Eager steps before --cuda-graph captures: lazily made state (optimizer buffers, the scaler's device
// tensors, cuDNN's algorithm choice) must exist first, since nothing may allocate from the host in a capture.
constexpr int64_t kGraphWarmupSteps = 3;

EvalOptions eval_options(const TrainConfig& config, c10::Device device, ProcessGroup* group) {
  EvalOptions options;
  options.group = group;
  options.device = device;
  options.channels_last = config.perf.channels_last;
  options.autocast = config.perf.amp != "off";
  options.autocast_dtype = amp_dtype(config.perf.amp);
  options.fold_bn = config.perf.fold_bn;
  return options;
}
}  // namespace

std::string checkpoint_path_in(const std::string& dir) { return dir + "/last.ckpt"; }

TrainSummary train(const TrainConfig& config, const TrainControl& control) {
  config_validate(config);
  runtime_apply(config.perf, config.run.threads);
  // A distributed run (RANK/WORLD_SIZE from a launcher, or Slurm) joins its group before any work.
  const DistEnv dist_env = dist_env_detect();
  const c10::Device device = dist_device(device_resolve(config.perf.device), dist_env);
  const std::shared_ptr<ProcessGroup> group = process_group_join(config.dist, dist_env, device);
  const int64_t world = group ? group->size() : 1;
  const bool main_rank = !group || group->rank() == 0;  // the one rank that logs and writes files
  const DatasetSplits data = data_load(config.data.source);

  torch::manual_seed(static_cast<uint64_t>(config.run.seed));
  Classifier model = model_make_for(config.model, data.train.channels(), data.train.num_classes);
  if (!config.run.init_from.empty()) {  // before the optimizer, so it starts from these weights
    const auto report = model_state_load_file(*model, config.run.init_from, !config.run.init_non_strict,
                                              config.run.init_skip);
    std::printf("initialised %zu tensors from %s (%s)\n", report.loaded, config.run.init_from.c_str(),
                state_load_summary(report).c_str());
  }
  model->to(device);
  if (config.perf.channels_last) module_to_channels_last(*model);
  auto optimizer = optimizer_make(config.optim, model->parameters(), config.perf.fused_optim);
  StepOptions step_options;
  step_options.label_smoothing = config.optim.label_smoothing;
  step_options.autocast = config.perf.amp != "off";
  step_options.autocast_dtype = amp_dtype(config.perf.amp);
  step_options.set_to_none = config.perf.set_to_none;
  GradScaler scaler(GradScalerOptions().enabled(config.perf.amp == "fp16"));  // bf16 keeps fp32's range

  LoaderOptions loader_options;
  loader_options.batch_size = config.data.batch_size;
  loader_options.workers = config.data.workers;
  loader_options.prefetch = config.data.prefetch;
  loader_options.augment = {config.data.augment, config.data.crop_pad, config.data.augment && config.data.flip};
  loader_options.sampler.seed = static_cast<uint64_t>(config.run.seed);
  loader_options.sampler.rank = group ? group->rank() : 0;  // each rank its share of every epoch
  loader_options.sampler.world_size = world;
  // Batches arrive where the model is, in the dtype autocast computes in and the model's memory format;
  // on CUDA through the pinned ring (--pin-memory), or all on the device with --data-on-device.
  loader_options.device = device;
  loader_options.dtype = config.perf.amp != "off" ? amp_dtype(config.perf.amp) : at::kFloat;
  loader_options.channels_last = config.perf.channels_last;
  loader_options.pin_memory = config.data.pin_memory;
  loader_options.on_device = config.data.on_device;
  Loader loader(data.train, loader_options);

  const int64_t batches = loader.batches_per_epoch();
  if (batches == 0)
    throw InputError("--batch-size " + std::to_string(config.data.batch_size) + " is larger than the " +
                     std::to_string(data.train.size()) + " training samples of " + config.data.source);
  const int64_t accumulate = config.perf.accumulate;
  const int64_t steps_per_epoch = (batches + accumulate - 1) / accumulate;  // a partial last cycle steps too
  int64_t total_steps = config.run.epochs * steps_per_epoch;
  if (config.run.max_steps > 0) total_steps = std::min(total_steps, config.run.max_steps);
  const LrSchedule schedule(config.schedule, config.optim.lr, total_steps, steps_per_epoch);
  TrainConfig saved_config = config;  // checkpoints record the world size: positions count per-rank batches
  saved_config.dist.world_size = world;
  const std::string config_json = config_to_json(saved_config);

  TrainPosition position;
  const std::string checkpoint = config.run.checkpoint_dir.empty() ? "" : checkpoint_path_in(config.run.checkpoint_dir);
  if (config.run.resume) {
    auto saved = Checkpoint::read(checkpoint);
    saved.restore(*model, optimizer.get(), /*rng=*/true, &scaler);
    position = saved.position();
    TrainConfig resumed;
    config_from_json(resumed, saved.config_json());
    if (resumed.dist.world_size > 0 && resumed.dist.world_size != world)
      throw InputError(checkpoint + " was written by a run of " + std::to_string(resumed.dist.world_size) +
                       " ranks; resume it with that many (now " + std::to_string(world) + ")");
    std::printf("resumed from %s at epoch %lld, step %lld\n", checkpoint.c_str(),
                static_cast<long long>(position.epoch + 1), static_cast<long long>(position.step));
  }
  if (!checkpoint.empty() && main_rank && !config.run.resume) {  // made now, not found missing at the first save
    std::error_code error;
    std::filesystem::create_directories(config.run.checkpoint_dir, error);
    if (error)
      throw InputError("--checkpoint-dir " + config.run.checkpoint_dir + ": cannot create it: " + error.message() +
                       "; give a writable folder");
  }
  SavedCheckpoint last_saved;  // named by the messages of runs that cannot go on
  if (config.run.resume) last_saved = {checkpoint, position.step};
  auto save = [&] {
    if (checkpoint.empty() || !main_rank) return;
    checkpoint_save(checkpoint, *model, optimizer.get(), position, config_json, &scaler);
    last_saved = {checkpoint, position.step};
  };

  // After the resume: every rank starts from rank 0's parameters and buffers (broadcast).
  std::unique_ptr<DistributedDataParallel> ddp;
  if (group) {
    ddp = std::make_unique<DistributedDataParallel>(
        *model, group,
        DdpOptions()
            .bucket_bytes(static_cast<int64_t>(config.dist.bucket_mb * 1024 * 1024))
            .broadcast_buffers(config.dist.broadcast_buffers));
    scaler.set_found_inf_reduce([&group](at::Tensor& found) { group->allreduce(found, "AMP inf/nan check", true); });
  }

  Progress progress(control.progress && main_rank);
  MetricsWriter metrics(main_rank ? config.run.metrics : "");
  TrainSummary summary;
  const auto run_start = Clock::now();
  double train_seconds = 0.0;
  int64_t images_trained = 0;
  int64_t consecutive_skipped = 0;  // optimizer steps skipped in a row (inf/nan)
  std::unique_ptr<GraphedStep> graphed;  // --cuda-graph: captured after kGraphWarmupSteps eager steps
  bool graph_refused = false;
  at::Tensor cycle_finite;          // every loss of the current accumulation cycle was finite

  bool done = position.step >= total_steps;
  // An epoch whose steps are all done but whose end (evaluation, checkpoint) was not reached, as after a
  // kill right after the last step's checkpoint, still runs its end: the loader then yields no batch.
  while (position.epoch < config.run.epochs && (!done || position.batch > 0)) {
    model->train();
    loader.start_epoch(position.epoch, position.batch);
    at::Tensor loss_sum = at::zeros({}, device), epoch_loss_sum = at::zeros({}, device);
    int64_t interval_batches = 0, interval_images = 0, epoch_batches = 0, epoch_images = 0;
    double data_wait = 0.0;
    auto interval_start = Clock::now(), epoch_start = Clock::now();

    for (;;) {
      const auto wait_start = Clock::now();
      auto batch = loader.next();
      data_wait += seconds_since(wait_start);
      if (!batch) break;
      const at::Tensor& images = batch->images;  // on the device, in the AMP dtype and memory format
      const at::Tensor& labels = batch->labels;

      // --- the micro-step: forward and backward of one batch of the cycle ---
      const int64_t cycle_start = position.batch / accumulate * accumulate;
      const int64_t cycle_length = std::min(accumulate, batches - cycle_start);
      if (config.perf.cuda_graph && !graphed && !graph_refused && position.step >= kGraphWarmupSteps) {
        std::string why = "the gradient all-reduce of distributed training is not captured; training without capture";
        if (!ddp) graphed = graphed_step_make(*model, step_options, scaler, images, labels, accumulate, &why);
        graph_refused = !graphed;
        step_options.keep_gradients = static_cast<bool>(graphed);
        summary.cuda_graph = static_cast<bool>(graphed);
        if (main_rank) std::printf("cuda-graph: %s\n", graphed ? "training step captured" : why.c_str());
      }
      at::Tensor loss;
      try {
        if (ddp) ddp->prepare_micro_step(/*sync=*/position.batch + 1 - cycle_start == cycle_length);  // no_sync before
        loss = graphed ? graphed->run(images, labels)
                       : train_micro_step(*model, images, labels, step_options, cycle_length, scaler);
      } catch (const c10::Error& e) {  // CUDA's OutOfMemoryError, or the CPU allocator's refusal
        if (!is_out_of_memory(e)) throw;
        throw RunError(out_of_memory_message(config, images, e.what_without_backtrace()));
      }
      loss_sum += loss, epoch_loss_sum += loss;
      cycle_finite = position.batch == cycle_start ? loss.isfinite() : cycle_finite.logical_and(loss.isfinite());
      ++position.batch, ++interval_batches, ++epoch_batches;
      const int64_t images_all_ranks = labels.size(0) * world;
      interval_images += images_all_ranks, epoch_images += images_all_ranks, images_trained += images_all_ranks;
      if (position.batch - cycle_start < cycle_length) continue;

      // --- the end of a cycle: the optimizer step ---
      if (ddp) ddp->finish_gradient_sync();  // gradients averaged over ranks before the update
      const double lr = schedule.lr_at(position.step);
      optimizer_set_lr(*optimizer, lr);
      // Without a scaler (fp32, bf16) a non-finite loss is caught here: one host sync per step.
      bool finite = scaler.enabled() || cycle_finite.item<bool>();
      if (group && !scaler.enabled()) finite = !group->any(!finite, "non-finite loss check");  // all ranks agree
      if (!finite && config.run.nan_policy == "stop")
        throw RunError(nonfinite_loss_message(position, last_saved));
      bool stepped = false;
      if (finite) {
        stepped = train_optimizer_step(*optimizer, scaler, step_options);
      } else {
        optimizer->zero_grad(/*set_to_none=*/!step_options.keep_gradients);  // --nan-policy skip: drop them
      }
      consecutive_skipped = stepped ? 0 : consecutive_skipped + 1;
      summary.skipped_steps += stepped ? 0 : 1;
      if (config.run.max_skipped_steps > 0 && consecutive_skipped >= config.run.max_skipped_steps)
        throw RunError(skipped_steps_message(position, consecutive_skipped, scaler.enabled(), last_saved));
      ++position.step;
      done = position.step >= total_steps;
      bool stop = control.should_stop && control.should_stop(position);
      if (group) stop = group->any(stop, "stop request");  // all ranks stop after the same step

      // --- once in a while: report progress ---
      if (position.step % config.run.log_every == 0 || position.batch == batches || done || stop) {
        StepReport report{position.epoch, config.run.epochs, position.batch, batches, position.step,
                          loss_sum.item<double>() / static_cast<double>(interval_batches),
                          static_cast<double>(interval_images) / seconds_since(interval_start),
                          seconds_since(run_start), lr, data_wait};
        progress.step(report);
        if (control.on_report) control.on_report(report);
        if (position.step % config.run.log_every == 0) metrics.step(report);
        loss_sum.zero_();
        interval_batches = interval_images = 0;
        data_wait = 0.0;
        interval_start = Clock::now();
      }
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
    if (ddp) ddp->sync_buffers();  // every rank evaluates (its shard with) rank 0's model
    summary.test = evaluate(*model, data.test, config.data.batch_size, config.data.workers, eval_options(config, device, group.get()));
    EpochReport report{position.epoch, position.step,
                       epoch_batches ? epoch_loss_sum.item<double>() / static_cast<double>(epoch_batches) : 0.0,
                       summary.test.loss, summary.test.accuracy, static_cast<double>(epoch_images) / epoch_train_s,
                       seconds_since(run_start)};
    progress.epoch(report, config.run.epochs);
    metrics.epoch(report);
    ++position.epoch;
    position.batch = 0;
    save();
  }
  if (!summary.stopped && summary.test.samples == 0) {  // nothing left to train: still report accuracy
    summary.test = evaluate(*model, data.test, config.data.batch_size, config.data.workers, eval_options(config, device, group.get()));
  }
  summary.position = position;
  summary.train_seconds = train_seconds;
  summary.img_per_s = train_seconds > 0 ? static_cast<double>(images_trained) / train_seconds : 0.0;
  if (ddp) {
    const DdpStats stats = ddp->stats();
    summary.world_size = world;
    summary.rank = group->rank();
    summary.buckets = ddp->bucket_count();
    summary.allreduces = stats.allreduces;
    summary.comm_s = stats.comm_s;
    summary.comm_span_s = stats.span_s;
    summary.comm_exposed_s = stats.exposed_s;
  }
  return summary;
}

} // namespace fastloop
