// The timed cell. Training is the trainer's Stepper on a TrainSetup; on the CPU the time split is taken
// in the timed repetitions (a phase mark only reads the clock there), on CUDA in one extra, marked
// repetition so the timed ones run without a sync inside. Evaluation is evaluate() on the first batches.
// With a process group every repetition starts and ends at a barrier so rank 0's clock measures all ranks.
// A CellPeer (the PyTorch peer) runs its repetitions between this cell's, in the same time window.
#include "fastloop/bench/cell_timer.h"

#include "fastloop/bench/device_probe.h"
#include "fastloop/core/errors.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/models/flops.h"
#include "fastloop/train/stepper.h"

#include <ATen/ATen.h>

#include <chrono>

namespace fastloop {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Whether the loader delivers batches on the device: always, except on CUDA rows without non_blocking,
/// whose host batches the cell copies blocking (the seed's rows before its non_blocking row).
bool loader_delivers(const CellPlan& plan) {
  return !plan.device.is_cuda() || plan.non_blocking || plan.config.data.on_device;
}

/// Batches without end: the next epoch starts when one runs out (the restart counts as data wait).
class BatchStream {
 public:
  BatchStream(const Dataset& dataset, const LoaderOptions& options) : loader_(dataset, options) {
    if (loader_.batches_per_epoch() == 0)
      throw InputError("--batch-size " + std::to_string(options.batch_size) + " is larger than the " +
                       std::to_string(dataset.size()) + " images of the split");
    loader_.start_epoch(0);
  }
  Batch next() {
    auto batch = loader_.next();
    if (!batch) {
      loader_.start_epoch(++epoch_);
      batch = loader_.next();
    }
    return std::move(*batch);
  }

 private:
  Loader loader_;
  int64_t epoch_ = 0;
};

/// All ranks here before any goes on (nothing without a group); the device's queued work done first.
void barrier(const CellPlan& plan) {
  device_synchronize(plan.device);
  if (!plan.group) return;
  at::Tensor token = at::zeros({1});
  plan.group->allreduce(token, "bench barrier");
}

int64_t all_ranks(const CellPlan& plan, int64_t images) { return plan.group ? images * plan.group->size() : images; }

/// Trains optimizer steps with the trainer's Stepper, counting the schedule's clock.
class CellTrainer {
 public:
  CellTrainer(TrainSetup& setup, const CellPlan& plan, const Dataset& train, int64_t total_steps,
              int64_t steps_per_epoch)
      : plan_(plan), stream_(train, setup.train_loader),
        stepper_(setup, LrSchedule(setup.config.schedule, setup.config.optim.lr, total_steps, steps_per_epoch),
                 /*announce=*/false) {}

  /// One optimizer step of `accumulate` batches; returns its images (this rank's).
  int64_t step(PhaseRecorder* recorder) {
    const int64_t micro_batches = plan_.config.perf.accumulate;
    int64_t images = 0;
    for (int64_t m = 0; m < micro_batches; ++m) {
      Batch batch = stream_.next();
      phase_mark(recorder, &TimeSplit::data_wait);
      if (batch.images.device() != plan_.device) {  // the rows that copy blocking, as the seed's baseline did
        const bool pin = plan_.config.data.pin_memory;
        batch.images = (pin ? batch.images.pin_memory() : batch.images).to(plan_.device);
        batch.labels = (pin ? batch.labels.pin_memory() : batch.labels).to(plan_.device);
        phase_mark(recorder, &TimeSplit::copy);
      }
      stepper_.micro_step(batch.images, batch.labels, m, micro_batches, recorder);
      images += batch.labels.size(0);
    }
    stepper_.optimizer_step(step_++, recorder);
    return images;
  }

  const Stepper& stepper() const { return stepper_; }

 private:
  const CellPlan& plan_;
  BatchStream stream_;
  Stepper stepper_;
  int64_t step_ = 0;
};

void train_measure(TrainSetup& setup, const CellPlan& plan, const Dataset& train, CellTimes& times) {
  const int64_t batches = loader_batches_per_epoch(train.size(), setup.train_loader);
  const int64_t epoch_steps = (batches + plan.config.perf.accumulate - 1) / plan.config.perf.accumulate;
  const int64_t steps = plan.steps > 0 ? plan.steps : epoch_steps;
  const int64_t warmup = plan.steps > 0 ? plan.warmup : plan.warmup * epoch_steps;
  const bool split_inline = !plan.device.is_cuda();  // CUDA: a separate marked repetition, no syncs when timed
  CellTrainer trainer(setup, plan, train, warmup + steps * (plan.repeat + (split_inline ? 0 : 1)), epoch_steps);
  setup.model->train();
  for (int64_t s = 0; s < warmup; ++s) trainer.step(nullptr);
  if (plan.config.perf.cuda_graph && !trainer.stepper().graphed()) {  // captures after its own warm-up
    for (int64_t s = 0; s < 4 && !trainer.stepper().graphed() && trainer.stepper().graph_refusal().empty(); ++s)
      trainer.step(nullptr);
    if (!trainer.stepper().graphed()) throw RunError("cuda-graph: " + trainer.stepper().graph_refusal());
  }
  if (plan.peer) plan.peer->train_begin();
  for (auto& rep : times.repetitions) {
    barrier(plan);
    const DdpStats before = setup.ddp ? setup.ddp->stats() : DdpStats{};
    PhaseRecorder recorder(plan.device);
    const auto start = Clock::now();
    int64_t images = 0;
    for (int64_t s = 0; s < steps; ++s) images += trainer.step(split_inline ? &recorder : nullptr);
    barrier(plan);
    rep.train_img_per_s = static_cast<double>(all_ranks(plan, images)) / seconds_since(start);
    rep.split = recorder.split;
    const double n = static_cast<double>(steps);
    rep.split /= n;
    if (setup.ddp) {
      const DdpStats after = setup.ddp->stats();
      rep.allreduces_per_step = static_cast<double>(after.allreduces - before.allreduces) / n;
      rep.comm_span_s = (after.span_s - before.span_s) / n;
      rep.comm_exposed_s = (after.exposed_s - before.exposed_s) / n;
    }
    if (plan.peer) plan.peer->train_rep();
  }
  if (split_inline) return;
  PhaseRecorder recorder(plan.device);  // the marked repetition: where a step's time goes, syncs included
  for (int64_t s = 0; s < steps; ++s) trainer.step(&recorder);
  TimeSplit split = recorder.split;
  split /= static_cast<double>(steps);
  for (auto& rep : times.repetitions) rep.split = split;
}

void eval_measure(TrainSetup& setup, const CellPlan& plan, const Dataset& test, CellTimes& times) {
  EvalOptions eval = setup.eval;
  eval.inference_mode = !plan.eval_grad_mode;
  eval.pin_memory = plan.config.data.pin_memory && loader_delivers(plan);
  const int64_t batch = plan.config.data.batch_size, workers = plan.config.data.workers;
  if (plan.warmup > 0) {
    EvalOptions warmup = eval;
    warmup.max_batches = plan.eval_steps > 0 ? plan.warmup : 0;  // --full: one whole pass
    evaluate(*setup.model, test, batch, workers, warmup);
  }
  if (plan.peer) plan.peer->eval_begin();
  eval.max_batches = plan.eval_steps;
  for (auto& rep : times.repetitions) {
    barrier(plan);
    const EvalResult result = evaluate(*setup.model, test, batch, workers, eval);  // samples of every rank
    // The batches alone, as the peer times them: the BatchNorm folding and the loader's start, once per
    // evaluate() call, weighed on 3-batch repetitions (the fold-bn row at 0.6x of its baseline, issue 15).
    rep.eval_img_per_s = static_cast<double>(result.samples) / result.batch_seconds;
    if (plan.peer) plan.peer->eval_rep();
  }
}

}  // namespace

CellTimes cell_run(const CellPlan& plan, const DatasetSplits& data) {
  TORCH_CHECK(plan.repeat >= 1, "cell_run: repeat must be >= 1, got ", plan.repeat);
  CellTimes times;
  times.repetitions.resize(static_cast<size_t>(plan.repeat));
  memory_peak_reset(plan.device);
  TrainSetup setup = train_setup(plan.config, data.train, plan.device, plan.group);
  if (!loader_delivers(plan)) setup.train_loader.device = c10::kCPU, setup.train_loader.pin_memory = false;
  times.forward_flops =
      model_forward_flops(*setup.model, {data.train.channels(), data.train.height(), data.train.width()});
  times.buckets = setup.ddp ? setup.ddp->bucket_count() : 0;
  if (plan.train) {
    train_measure(setup, plan, data.train, times);
    if (plan.on_trained) plan.on_trained(*setup.model);
    times.train_peak_bytes = memory_peak_bytes(plan.device);
  }
  memory_peak_reset(plan.device);
  if (setup.ddp) setup.ddp->sync_buffers();  // every rank evaluates rank 0's model
  eval_measure(setup, plan, data.test, times);
  times.eval_peak_bytes = memory_peak_bytes(plan.device);
  return times;
}

} // namespace fastloop
