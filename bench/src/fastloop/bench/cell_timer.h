// One cell of the bench grid, timed: the run is built by train_setup() and trained by the trainer's own
// Stepper on the real Loader's batches, then evaluated by evaluate(), repeated after an untimed warm-up.
// The bench re-implements nothing of a step, so its figures are figures about `fastloop train`.
#pragma once

#include "fastloop/bench/result.h"
#include "fastloop/core/config.h"
#include "fastloop/data/sources/dataset.h"
#include "fastloop/models/classifier.h"
#include "fastloop/train/setup.h"

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fastloop {

class ProcessGroup;

/// Another implementation of the same cell timed in the same time window (the PyTorch peer): cell_run()
/// calls it after its own warm-up, and its repetitions alternate with the cell's, A B B A A B (several
/// peers: A B C C B A), so a drift of the machine's speed reaches both sides of every pair alike and
/// neither side always runs first.
class CellPeer {
 public:
  virtual ~CellPeer() = default;
  virtual void train_begin() = 0;  // set up and warm up (fastloop has warmed up)
  virtual void train_rep() = 0;    // one timed training repetition (fastloop has done one)
  virtual void eval_begin() = 0;   // switch to evaluation and warm up
  virtual void eval_rep() = 0;     // one timed evaluation repetition

  /// "ok", or "n/a: why" / "failed: why" when it could not run the cell (fastloop's side goes on).
  const std::string& status() const { return status_; }
  /// Its images/s per timed repetition, in the order they ran.
  const std::vector<double>& train_reps() const { return train_reps_; }
  const std::vector<double>& eval_reps() const { return eval_reps_; }

 protected:
  std::string status_ = "ok";
  std::vector<double> train_reps_, eval_reps_;
};

/// `peer`'s figures beside `cell`'s (whose repetitions are filled): its medians and the pair ratios.
Comparison comparison_of(const BenchCell& cell, std::string name, const CellPeer& peer);

/// What a row runs for one model, resolved: the settings and the measuring schedule.
struct CellPlan {
  TrainConfig config;            // everything a run of `fastloop train` with these flags would use
  c10::Device device = c10::kCPU;
  bool non_blocking = true;      // CUDA: the loader's pinned ring with non_blocking side-stream copies;
                                 // false: host batches copied blocking before the step (pinned first with pin_memory)
  bool train = true;             // false: an eval-only row
  bool eval_grad_mode = false;   // evaluate without InferenceMode (what the no-grad row compares)
  int64_t steps = 5;             // timed optimizer steps per repetition (of `accumulate` batches each); 0: an epoch
  int64_t eval_steps = 5;        // timed evaluation batches per repetition; 0: the whole test split
  int64_t warmup = 1;            // untimed steps (and eval batches) first; with steps 0: epochs
  int64_t repeat = 3;
  /// Several ranks: the model is wrapped in DistributedDataParallel (config.dist.bucket_mb) on this group,
  /// each rank reads its shard, and images/s count every rank's images.
  std::shared_ptr<ProcessGroup> group;
  /// Called with the model after the last training step, before evaluation (tests compare it with train's).
  std::function<void(ClassifierImpl&)> on_trained;
  /// Timed alternately with this cell's repetitions, in this order on even repetitions and reversed on odd
  /// ones (the PyTorch peer, a --twin, the twin's eager PyTorch cell); may be empty.
  std::vector<CellPeer*> peers;
};

struct RepetitionTimes {
  double train_img_per_s = 0.0;
  double eval_img_per_s = 0.0;
  TimeSplit split;               // seconds per step, mean over the repetition's steps
  double allreduces_per_step = 0.0;  // DDP (with a group): bucket all-reduces per step
  double comm_span_s = 0.0;          //   seconds per step from the first all-reduce's launch to the last one's end
  double comm_exposed_s = 0.0;       //   seconds per step the optimizer step waited for them
};

struct CellTimes {
  std::vector<RepetitionTimes> repetitions;
  double train_peak_bytes = 0.0; // over warm-up and timed training
  double eval_peak_bytes = 0.0;  // over warm-up and timed evaluation
  double forward_flops = 0.0;    // of one image through this cell's model
  int64_t buckets = 0;           // DDP gradient buckets (with a group)
};

class CellTrainer;

/// One cell's run, measured a repetition at a time: cell_run() drives it, and a fastloop twin (a CellPeer)
/// drives another between its repetitions. Built by train_setup() (seed config.run.seed); optimizer steps
/// follow config.schedule over warmup + repeat × steps steps, as `train --max-steps` that many would.
class CellRun {
 public:
  CellRun(const CellPlan& plan, const DatasetSplits& data);
  ~CellRun();
  CellRun(const CellRun&) = delete;
  CellRun& operator=(const CellRun&) = delete;

  void train_begin();             // untimed warm-up steps (and the CUDA-graph capture)
  void train_rep(RepetitionTimes& rep);  // one timed training repetition
  void train_end();               // CUDA: the marked repetition of the time split; on_trained; peak memory
  void eval_begin();              // every rank gets rank 0's buffers; untimed warm-up batches
  void eval_rep(RepetitionTimes& rep);   // one timed evaluation repetition
  CellTimes& times() { return times_; }

 private:
  EvalOptions eval_options() const;
  const CellPlan& plan_;
  const DatasetSplits& data_;
  TrainSetup setup_;
  std::unique_ptr<CellTrainer> trainer_;
  int64_t steps_ = 0, warmup_ = 0;
  bool split_inline_ = true;      // CPU: the split is taken in the timed repetitions themselves
  CellTimes times_;
};

/// Measures the cell: warm-up, then its repetitions, each followed by one of every peer's.
CellTimes cell_run(const CellPlan& plan, const DatasetSplits& data);

} // namespace fastloop
