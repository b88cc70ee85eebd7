// The timed cell. Training is the trainer's Stepper on a TrainSetup; on the CPU the time split is taken
// in the timed repetitions (a phase mark only reads the clock there), on CUDA in one extra, marked
// repetition so the timed ones run without a sync inside. Evaluation is evaluate() on the first batches.
// With a process group every repetition starts and ends at a barrier so rank 0's clock measures all ranks.
// CellPeers (the PyTorch peer, a --twin) run their repetitions between this cell's, in the same time window.
#include "fastloop/bench/cell_timer.h"

#include "fastloop/bench/device_probe.h"
#include "fastloop/core/clock.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/stats.h"
#include "fastloop/dist/process_group.h"
#include "fastloop/models/flops.h"
#include "fastloop/train/cycle.h"

#include <ATen/ATen.h>

#include <chrono>

namespace fastloop {

namespace {

/// Whether the loader delivers batches on the device: always, except on CUDA rows without non_blocking,
/// whose host batches the cell copies blocking (the seed's rows before its non_blocking row).
bool loader_delivers(const CellPlan& plan) {
  return !plan.device.is_cuda() || plan.non_blocking || plan.config.data.on_device;
}

}  // namespace

/// Batches without end: the next epoch starts when one runs out (the restart counts as data wait). Not
/// file-local: CellTrainer (declared in cell_timer.h) holds one.
class CellBatchStream {
 public:
  CellBatchStream(const Dataset& dataset, const LoaderOptions& options) : loader_(dataset, options) {
    loader_.start_epoch(0);  // run_length() has checked that an epoch has a batch
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

namespace {

/// All ranks here before any goes on (nothing without a group); the device's queued work done first.
void barrier(const CellPlan& plan) {
  device_synchronize(plan.device);
  if (!plan.group) return;
  at::Tensor token = at::zeros({1});
  plan.group->allreduce(token, "bench barrier");
}

int64_t all_ranks(const CellPlan& plan, int64_t images) { return plan.group ? images * plan.group->size() : images; }

}  // namespace

/// Trains optimizer steps with the trainer's cycle (mixup, skip policy and all), counting the schedule's clock.
class CellTrainer {
 public:
  CellTrainer(TrainSetup& setup, const CellPlan& plan, const Dataset& train, const RunLength& length)
      : plan_(plan), stream_(train, setup.train_loader), cycle_(setup, length, /*announce=*/false) {}

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
      cycle_.micro_step(batch, position_.step, m, micro_batches, recorder);
      images += batch.labels.size(0);
    }
    cycle_.optimizer_step(position_, {}, recorder);
    ++position_.step;
    return images;
  }

  const Stepper& stepper() const { return cycle_.stepper(); }

 private:
  const CellPlan& plan_;
  CellBatchStream stream_;
  TrainCycle cycle_;
  TrainPosition position_;  // the schedule's clock (the bench's batches run on across epochs)
};

namespace {

/// The peak-memory counter reset, then the run built: the cell's peak includes its own setup.
TrainSetup setup_for(const CellPlan& plan, const DatasetSplits& data) {
  memory_peak_reset(plan.device);
  TrainSetup setup = train_setup(plan.config, data.train, plan.device, plan.group);
  if (!loader_delivers(plan)) setup.train_loader.device = c10::kCPU, setup.train_loader.pin_memory = false;
  return setup;
}

}  // namespace

CellRun::CellRun(const CellPlan& plan, const DatasetSplits& data)
    : plan_(plan), data_(data), setup_(setup_for(plan, data)) {
  TORCH_CHECK(plan.repeat >= 1, "cell_run: repeat must be >= 1, got ", plan.repeat);
  times_.repetitions.resize(static_cast<size_t>(plan.repeat));
  times_.forward_flops =
      model_forward_flops(*setup_.model, {data.train.channels(), data.train.height(), data.train.width()});
  times_.buckets = setup_.ddp ? setup_.ddp->bucket_count() : 0;
  split_inline_ = !plan.device.is_cuda();  // CUDA: a separate marked repetition, no syncs when timed
  if (!plan.train) return;  // an eval-only row
  RunLength length =
      run_length(plan.config, loader_batches_per_epoch(data.train.size(), setup_.train_loader), data.train.size());
  steps_ = plan.steps > 0 ? plan.steps : length.steps_per_epoch;
  warmup_ = plan.steps > 0 ? plan.warmup : plan.warmup * length.steps_per_epoch;
  length.total_steps = warmup_ + steps_ * (plan.repeat + (split_inline_ ? 0 : 1));  // the schedule's span
  trainer_ = std::make_unique<CellTrainer>(setup_, plan, data.train, length);
}

CellRun::~CellRun() = default;

void CellRun::train_begin() {
  setup_.model->train();
  for (int64_t s = 0; s < warmup_; ++s) trainer_->step(nullptr);
  if (plan_.config.perf.cuda_graph && !trainer_->stepper().graphed()) {  // captures after its own warm-up
    for (int64_t s = 0; s < 4 && !trainer_->stepper().graphed() && trainer_->stepper().graph_refusal().empty(); ++s)
      trainer_->step(nullptr);
    if (!trainer_->stepper().graphed()) throw RunError("cuda-graph: " + trainer_->stepper().graph_refusal());
  }
}

void CellRun::train_rep(RepetitionTimes& rep) {
  barrier(plan_);
  const DdpStats before = setup_.ddp ? setup_.ddp->stats() : DdpStats{};
  PhaseRecorder recorder(plan_.device);
  const auto start = Clock::now();
  int64_t images = 0;
  for (int64_t s = 0; s < steps_; ++s) images += trainer_->step(split_inline_ ? &recorder : nullptr);
  barrier(plan_);
  rep.train_img_per_s = static_cast<double>(all_ranks(plan_, images)) / seconds_since(start);
  rep.split = recorder.split;
  const double n = static_cast<double>(steps_);
  rep.split /= n;
  if (setup_.ddp) {
    const DdpStats after = setup_.ddp->stats();
    rep.allreduces_per_step = static_cast<double>(after.allreduces - before.allreduces) / n;
    rep.comm_span_s = (after.span_s - before.span_s) / n;
    rep.comm_exposed_s = (after.exposed_s - before.exposed_s) / n;
  }
}

void CellRun::train_end() {
  if (!split_inline_) {
    PhaseRecorder recorder(plan_.device);  // the marked repetition: where a step's time goes, syncs included
    for (int64_t s = 0; s < steps_; ++s) trainer_->step(&recorder);
    TimeSplit split = recorder.split;
    split /= static_cast<double>(steps_);
    for (auto& rep : times_.repetitions) rep.split = split;
  }
  if (plan_.on_trained) plan_.on_trained(*setup_.model);
  times_.train_peak_bytes = memory_peak_bytes(plan_.device);
}

void CellRun::eval_begin() {
  memory_peak_reset(plan_.device);
  if (setup_.ddp) setup_.ddp->sync_buffers();  // every rank evaluates rank 0's model
  if (plan_.warmup <= 0) return;
  EvalOptions warmup = eval_options();
  warmup.max_batches = plan_.eval_steps > 0 ? plan_.warmup : 0;  // --full: one whole pass
  evaluate(*setup_.model, data_.test, plan_.config.data.batch_size, plan_.config.data.workers, warmup);
}

void CellRun::eval_rep(RepetitionTimes& rep) {
  EvalOptions eval = eval_options();
  eval.max_batches = plan_.eval_steps;
  barrier(plan_);
  const EvalResult result = evaluate(*setup_.model, data_.test, plan_.config.data.batch_size,
                                     plan_.config.data.workers, eval);  // samples of every rank
  // The batches alone, as the peer times them: the BatchNorm folding and the loader's start, once per
  // evaluate() call, weighed on 3-batch repetitions (the fold-bn row at 0.6x of its baseline, issue 15).
  rep.eval_img_per_s = static_cast<double>(result.samples) / result.batch_seconds;
  times_.eval_peak_bytes = memory_peak_bytes(plan_.device);
}

EvalOptions CellRun::eval_options() const {
  EvalOptions eval = setup_.eval;
  eval.tta = "off";  // the peers' evaluation is one forward per image (report_settings says so)
  eval.inference_mode = !plan_.eval_grad_mode;
  eval.pin_memory = plan_.config.data.pin_memory && loader_delivers(plan_);
  return eval;
}

namespace {

/// Repetition i of the cell (`own`) and of each peer (`theirs`): A B C on even i, C B A on odd i, so no side
/// always runs first after the others (a process's first repetitions can be slower: heap growth, page faults;
/// with the cell first every time, the grid's first cell measured a scripted model 7% below its twin).
template <typename Own, typename Theirs>
void repetition_pair(size_t i, const std::vector<CellPeer*>& peers, Own own, Theirs theirs) {
  if (i % 2 == 0) {
    own();
    for (CellPeer* peer : peers) theirs(*peer);
  } else {
    for (auto peer = peers.rbegin(); peer != peers.rend(); ++peer) theirs(**peer);
    own();
  }
}

}  // namespace

CellTimes cell_run(const CellPlan& plan, const DatasetSplits& data) {
  CellRun run(plan, data);
  auto& reps = run.times().repetitions;
  if (plan.train) {
    run.train_begin();
    for (CellPeer* peer : plan.peers) peer->train_begin();
    for (size_t i = 0; i < reps.size(); ++i)
      repetition_pair(i, plan.peers, [&] { run.train_rep(reps[i]); }, [](CellPeer& peer) { peer.train_rep(); });
    run.train_end();
  }
  run.eval_begin();
  for (CellPeer* peer : plan.peers) peer->eval_begin();
  for (size_t i = 0; i < reps.size(); ++i)
    repetition_pair(i, plan.peers, [&] { run.eval_rep(reps[i]); }, [](CellPeer& peer) { peer.eval_rep(); });
  return std::move(run.times());
}

Comparison comparison_of(const BenchCell& cell, std::string name, const CellPeer& peer) {
  Comparison c;
  c.name = std::move(name);
  c.status = peer.status();
  c.train_img_per_s_reps = peer.train_reps();
  c.eval_img_per_s_reps = peer.eval_reps();
  if (c.status != "ok") return c;
  c.train_img_per_s = median(peer.train_reps());
  c.eval_img_per_s = median(peer.eval_reps());
  c.train = pair_ratio(cell.train_img_per_s_reps, peer.train_reps());
  c.eval = pair_ratio(cell.eval_img_per_s_reps, peer.eval_reps());
  return c;
}

} // namespace fastloop
