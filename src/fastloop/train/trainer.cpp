// The training loop. It reads top-down: the one setup (train/setup.h), then for each batch the
// micro-step, and at the end of each accumulation cycle the optimizer step followed by the
// once-in-a-while blocks (log, checkpoint), then the evaluation at each epoch end.
#include "fastloop/train/trainer.h"

#include "fastloop/core/clock.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/data/transforms/image_augment.h"
#include "fastloop/data/transforms/pipeline.h"
#include "fastloop/data/transforms/split_size.h"
#include "fastloop/dist/dist_env.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/train/budget_calibrate.h"
#include "fastloop/train/cycle.h"
#include "fastloop/train/faults.h"
#include "fastloop/train/loader_state.h"
#include "fastloop/train/profile.h"
#include "fastloop/train/run_checkpoint.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/tensorboard_log.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace fastloop {

namespace {

/// Loss, batches, images and loader wait of a log interval or an epoch; the loss summed on the device.
struct Tally {
  at::Tensor loss_sum;
  int64_t batches = 0, images = 0;
  double data_wait = 0.0;
  Clock::time_point start = Clock::now();
  explicit Tally(c10::Device device) : loss_sum(at::zeros({}, device)) {}
  void add(const at::Tensor& loss, int64_t batch_images) { loss_sum += loss, ++batches, images += batch_images; }
  double mean_loss() const { return batches ? loss_sum.item<double>() / static_cast<double>(batches) : 0.0; }
  double img_per_s() const { return static_cast<double>(images) / seconds_since(start); }
  void reset() { loss_sum.zero_(), batches = images = 0, data_wait = 0.0, start = Clock::now(); }
};

/// --transform and --eval-transform compiled once here, beside config_validate: a misspelt or unsupported
/// transform, or one that ends with uint8 images, stops the run with the Pipeline's message before any data
/// is loaded or any line printed (train_setup and the eval loader compile them again for the run).
void transforms_validate(const TrainConfig& config) {
  for (const std::string* spec : {&config.data.transform, &config.data.eval_transform})
    if (!spec->empty()) pipeline_check_output(Pipeline(*spec));
}

/// What a run tells its user: the progress display, --metrics lines, --tensorboard events and the control's
/// report callback.
class RunLog {
 public:
  RunLog(const TrainSetup& setup, const TrainControl& control)
      : config_(setup.config), control_(control), progress_(control.progress && setup.main_rank()),
        metrics_(setup.main_rank() ? setup.config.run.metrics : ""),
        tensorboard_(setup.main_rank() ? setup.config.run.tensorboard : "", setup.position.step), scaler_(setup.scaler) {}
  /// After an optimizer step: at the end of a log interval (every --log-every steps, an epoch's last batch,
  /// the run's last step), the interval's report (its loss, rate and loader wait); starts the next interval.
  void step_done(const TrainPosition& p, int64_t batches, Tally& interval, double lr, bool last) {
    if (p.step % config_.run.log_every != 0 && p.batch != batches && !last) return;
    const StepReport report{p.epoch, config_.run.epochs, p.batch, batches, p.step, interval.mean_loss(),
                            interval.img_per_s(), seconds_since(start_), lr, interval.data_wait};
    progress_.step(report);
    if (control_.on_report) control_.on_report(report);
    if (p.step % config_.run.log_every == 0) metrics_.step(report);
    const double interval_s = seconds_since(interval.start);
    tensorboard_.step(report, interval_s > 0 ? interval.data_wait / interval_s : 0.0,
                      scaler_.enabled() ? scaler_.current_scale() : 0.0);
    interval.reset();
  }
  /// At an epoch end, with its evaluation's result (null: --eval-every left this epoch unevaluated).
  void epoch(const TrainPosition& p, const Tally& epoch, const EvalResult* test, double epoch_train_s) {
    const EpochReport report{p.epoch, p.step, epoch.mean_loss(), test ? test->loss : 0.0, test ? test->accuracy : 0.0,
                             static_cast<double>(epoch.images) / epoch_train_s, seconds_since(start_), test != nullptr,
                             test ? test->tta : "off"};
    progress_.epoch(report, config_.run.epochs);
    metrics_.epoch(report);
    tensorboard_.epoch(report);
  }
  /// --time-budget's plan and re-plans as --metrics lines.
  void record(const std::string& kind, const std::string& json) { metrics_.record(kind, json); }

 private:
  const TrainConfig& config_;
  const TrainControl& control_;
  Progress progress_;
  MetricsWriter metrics_;
  TensorBoardLog tensorboard_;
  const GradScaler& scaler_;  // its scale is logged under fp16
  Clock::time_point start_ = Clock::now();
};

/// The epoch's evaluation. With --ema-decay the EMA weights are the run's result (as timm's train.py
/// ranks its checkpoints by them); the raw weights' accuracy is printed beside it. --tta applies to the
/// final evaluation only (the run's result; 2-6x the forward passes of the per-epoch ones).
EvalResult evaluate_run(TrainSetup& setup, const Dataset& test, bool progress, bool final) {
  const TrainConfig& config = setup.config;
  EvalOptions options = setup.eval;
  if (!final) options.tta = "off";
  const EvalResult model = evaluate(*setup.model, test, config.data.batch_size, config.data.workers, options);
  if (!setup.ema) return model;
  if (setup.group) setup.ema->sync(*setup.group);  // each rank averaged its own BatchNorm statistics
  const EvalResult ema = evaluate(setup.ema->module(), test, config.data.batch_size, config.data.workers, options);
  if (progress && setup.main_rank())
    std::printf("ema: test accuracy %.2f%% (loss %.4f); without EMA %.2f%% (loss %.4f)\n", 100.0 * ema.accuracy,
                ema.loss, 100.0 * model.accuracy, model.loss);
  return ema;
}

/// --expect-test-acc: a run that ends below the expected accuracy fails (exit 3), for CI and scripts.
void expect_accuracy(const TrainConfig& config, const TrainSummary& summary) {
  if (config.run.expect_test_acc <= 0 || summary.stopped || summary.test.accuracy >= config.run.expect_test_acc) return;
  char message[256];
  std::snprintf(message, sizeof(message),
                "test accuracy %.2f%% after %lld steps is below --expect-test-acc %.2f%%; the recipe or the data "
                "changed, or the run needs more epochs",
                100.0 * summary.test.accuracy, static_cast<long long>(summary.position.step),
                100.0 * config.run.expect_test_acc);
  throw RunError(message);
}

void no_test_split_report(const std::string& source) {
  std::printf("%s has no test split (no val/ folder, no val shards): evaluation is skipped\n", source.c_str());
}

/// --bad-image-policy skip: how many images of the epoch were skipped (this rank's share), if any.
void skipped_images_report(const Loader& loader, int64_t epoch) {
  if (loader.bad_images_skipped() == 0) return;
  std::printf("epoch %lld: skipped %lld undecodable images (this rank's share)\n", static_cast<long long>(epoch + 1),
              static_cast<long long>(loader.bad_images_skipped()));
}

void summary_fill(TrainSummary& summary, const TrainSetup& setup, double train_seconds, int64_t images) {
  summary.position = setup.position;
  summary.train_seconds = train_seconds;
  summary.img_per_s = train_seconds > 0 ? static_cast<double>(images) / train_seconds : 0.0;
  summary.world_size = setup.world_size();
  summary.rank = setup.rank();
  if (!setup.ddp) return;
  const DdpStats stats = setup.ddp->stats();
  summary.buckets = setup.ddp->bucket_count();
  summary.allreduces = stats.allreduces;
  summary.comm_span_s = stats.span_s;
  summary.comm_exposed_s = stats.exposed_s;
}

/// A run's parts as train() made them, for the epoch's steps and its end, which take turns with them.
struct RunParts {
  const TrainControl& control;
  Clock::time_point started;
  RunBudget& budget;
  TrainSetup& setup;
  Loader& loader;
  RunLength& length;
  TrainCycle& cycles;
  RunCheckpoint& checkpoint;
  StepProfiler& profiler;
  RunLog& log;
  TrainSummary summary;
  double train_seconds = 0.0;
  int64_t images_trained = 0;

  bool steps_left() const { return setup.position.step < length.total_steps; }

  /// A budgeted run whose machine slowed down: the remaining steps re-planned, the schedule with them.
  void follow_replan(int64_t replanned) {
    if (replanned <= 0) return;
    length.total_steps = setup.config.run.max_steps = replanned;
    setup.config.run.epochs = budget.current().epochs;
    setup.config.run.eval_every = budget.current().eval_every;  // a stretch may drop evaluations before the last
    cycles.replan(setup.position.step, replanned);
    log.record("replan", budget.last_replan_json());
    checkpoint.record_budget(budget.json());
  }
};

/// A resume on another number of ranks than wrote the checkpoint: the rest of the epoch has another number of
/// batches here, so the run's steps (and its schedule) are those done, the rest's and the later epochs'.
void elastic_length(RunParts& run) {
  const TrainPosition& position = run.setup.position;
  RunLength& length = run.length;
  const int64_t rest = (run.loader.end_batch() - run.loader.next_batch() + length.accumulate - 1) / length.accumulate;
  int64_t total = position.step + rest + (run.setup.config.run.epochs - position.epoch - 1) * length.steps_per_epoch;
  if (run.setup.config.run.max_steps > 0) total = std::min(total, run.setup.config.run.max_steps);
  if (total == length.total_steps) return;
  length.total_steps = total;
  run.cycles.replan(position.step, total);
}

/// Waits for the next batch in slices, so that a stop request (Ctrl-C) also ends a wait that does not end by
/// itself (a remote store that stopped answering): the workers are stopped, which cancels their fetches, and
/// the run stops as after a step. Only at a cycle's start and with one process: ranks agree on stopping after
/// a step, which a rank waiting here would not reach.
bool stop_while_waiting(RunParts& run, const TrainPosition& position) {
  if (!run.control.should_stop || run.setup.group || run.length.micro(position.batch) != 0) return false;
  for (;;) {
    const bool ready = run.loader.wait_next(std::chrono::milliseconds(100));
    if (run.control.should_stop(position)) {  // checked after a ready wait too: it may be a cancelled fetch
      run.loader.stop();
      run.checkpoint.save();
      run.summary.stopped = true;
      return true;
    }
    if (ready) return false;
  }
}

/// One epoch's batches (from a resumed position's): each micro-step, and at each cycle's end the optimizer
/// step and the once-in-a-while blocks. Returns the epoch's tally; sets summary.stopped on a stop request.
Tally epoch_steps(RunParts& run) {
  TrainSetup& setup = run.setup;
  TrainPosition& position = setup.position;
  // A resumed epoch starts at its checkpoint's place, numbered as the loader numbers it; any other at its start.
  run.loader.start_epoch(position.epoch, setup.loader_start);
  position.batch = setup.loader_start.taken / (setup.train_loader.batch_size * setup.world_size());
  if (setup.loader_start.order_world_size != 0 && setup.loader_start.order_world_size != setup.world_size())
    elastic_length(run);
  setup.loader_start = {};
  Tally interval(setup.device), epoch(setup.device);
  for (;;) {
    run.profiler.step_begins(position.step);  // --profile: from the wait for the step's first batch
    const auto wait_start = Clock::now();
    if (stop_while_waiting(run, position)) break;
    auto batch = run.loader.next();
    interval.data_wait += seconds_since(wait_start);
    if (!batch) break;

    // --- the micro-step: forward and backward of one batch of the cycle ---
    const int64_t micro = run.length.micro(position.batch);
    const int64_t cycle_length = run.length.cycle_length(position.batch);
    const at::Tensor loss = run.cycles.micro_step(*batch, position.step, micro, cycle_length);
    const int64_t images = batch->labels.size(0) * setup.world_size();
    interval.add(loss, images), epoch.add(loss, images), run.images_trained += images;
    ++position.batch;
    if (micro + 1 < cycle_length) continue;

    // --- the end of a cycle: the optimizer step ---
    const CycleResult cycle = run.cycles.optimizer_step(position, run.checkpoint.last());
    run.summary.skipped_steps = run.cycles.skipped_steps();
    ++position.step;
    run.profiler.step_done(position.step);
    const bool done = !run.steps_left();
    bool stop = run.control.should_stop && run.control.should_stop(position);
    if (setup.group) stop = setup.group->any(stop, "stop request");  // all ranks stop after the same step

    // --- once in a while: report progress, checkpoint ---
    run.log.step_done(position, run.length.batches, interval, cycle.lr, /*last=*/done || stop);
    run.checkpoint.step_done();
    if (stop) run.checkpoint.save(), run.summary.stopped = true;
    if (stop || done) break;
    run.follow_replan(run.budget.step_done(position.step, run.train_seconds + seconds_since(epoch.start),
                                           seconds_since(run.started), run.control.budget_costs));
  }
  run.loader.stop();
  if (setup.main_rank()) skipped_images_report(run.loader, position.epoch);
  return epoch;
}

/// Each epoch's end: evaluate (every --eval-every-th epoch and the last, the last with --tta), report,
/// checkpoint, and a budgeted run's check of its projected end (also made during the epoch).
void epoch_end(RunParts& run, const Dataset& test, const Tally& epoch, double epoch_train_s) {
  TrainSetup& setup = run.setup;
  const int64_t ended = setup.position.epoch + 1;
  const bool final = ended == setup.config.run.epochs;
  const bool evaluates = final || ended % std::max<int64_t>(1, setup.config.run.eval_every) == 0;
  double eval_s = 0.0;  // 0: not evaluated (the budget's check then keeps the last evaluation's cost)
  if (evaluates) {
    if (setup.ddp) setup.ddp->sync_buffers();  // every rank evaluates (its shard with) rank 0's model
    const auto eval_start = Clock::now();
    run.summary.test = evaluate_run(setup, test, run.control.progress, final);
    eval_s = seconds_since(eval_start);
    run.checkpoint.offer_best(run.summary.test.accuracy);
  }
  run.log.epoch(setup.position, epoch, evaluates ? &run.summary.test : nullptr, epoch_train_s);
  ++setup.position.epoch, setup.position.batch = 0;
  run.checkpoint.save();
  run.follow_replan(run.budget.epoch_end(setup.position.step, eval_s, seconds_since(run.started),
                                         run.control.budget_costs));
}

}  // namespace

TrainSummary train(const TrainConfig& config, const TrainControl& control) {
  const auto started = Clock::now();
  config_validate(config);  // the one check of a run's config (train_setup and the CLI rely on it)
  transforms_validate(config);
  const DistEnv dist_env = dist_env_detect();
  RunBudget budget(budget_seconds(config, dist_env.world_size), control.progress && dist_env.rank == 0);
  if (control.on_start) control.on_start(config);
  // A distributed run (RANK/WORLD_SIZE from a launcher, or Slurm) joins its group before any work.
  const c10::Device device = dist_device(device_resolve(config.perf.device), dist_env);
  DatasetSplits data = data_load(config.data);
  splits_size_resolve(data, config.data);
  // --time-budget: calibrated on a setup of its own, then --epochs and --max-steps as planned.
  const TrainConfig planned = budget.plan(config, data, device, started, control.budget_costs,
                                           control.amp_candidates);
  TrainSetup setup = train_setup(planned, data.train, device, process_group_join(config.dist, dist_env, device));
  Loader loader(data.train, setup.train_loader);
  if (data.test.size() == 0 && setup.main_rank()) no_test_split_report(config.data.source);
  RunLength length = run_length(setup.config, loader.batches_per_epoch(), data.train.size());
  TrainCycle cycles(setup, length, setup.main_rank());
  RunCheckpoint checkpoint(setup, loader);
  StepProfiler profiler(setup.main_rank() ? config.run.profile : "", config.run.profile_steps, device,
                        length.total_steps);
  RunLog log(setup, control);
  if (budget.on()) log.record("plan", budget.plan_json()), checkpoint.record_budget(budget.json());

  RunParts run{control, started, budget, setup, loader, length, cycles, checkpoint, profiler, log, {}};
  const TrainPosition& position = setup.position;
  // An epoch whose steps are all done but whose end (evaluation, checkpoint) was not reached, as after a
  // kill right after the last step's checkpoint, still runs its end: the loader then yields no batch.
  while (position.epoch < setup.config.run.epochs && (run.steps_left() || position.batch > 0)) {
    setup.model->train();
    const Tally epoch = epoch_steps(run);
    const double epoch_train_s = seconds_since(epoch.start);
    run.train_seconds += epoch_train_s;
    if (run.summary.stopped) break;
    epoch_end(run, data.test, epoch, epoch_train_s);
  }
  TrainSummary& summary = run.summary;
  if (!summary.stopped && summary.test.samples == 0)  // nothing left to train: still report accuracy
    summary.test = evaluate_run(setup, data.test, control.progress, /*final=*/true);
  profiler.finish();
  summary_fill(summary, setup, run.train_seconds, run.images_trained);
  summary.budget = budget.json();
  summary.loader_state = loader_state_to_json(checkpoint.loader_state());
  summary.elapsed_seconds = seconds_since(started);
  expect_accuracy(config, summary);
  return summary;
}

} // namespace fastloop
