// A run's checkpoints: DIR/last.ckpt every --checkpoint-every steps, at each epoch end and on a stop, and
// --keep-best's, each with the config, the ranks and the train loader's state (train/loader_state.h).
#pragma once

#include "fastloop/data/loader/loader.h"
#include "fastloop/train/best_checkpoints.h"
#include "fastloop/train/faults.h"
#include "fastloop/train/loader_state.h"
#include "fastloop/train/setup.h"

#include <string>

namespace fastloop {

/// The run's checkpoint: written by the main rank alone, with the config and world size it ran with and the
/// train loader's state; the last one written is named by the messages of runs that cannot go on.
class RunCheckpoint {
 public:
  /// Creates --checkpoint-dir when missing (InputError when it cannot), so that the first save does not fail.
  RunCheckpoint(const TrainSetup& setup, const Loader& loader);

  /// --checkpoint-every N: a save after every Nth optimizer step.
  void step_done();
  void save();
  /// --keep-best: after an epoch's evaluation (before the position moves on to the next epoch).
  void offer_best(double accuracy);
  const SavedCheckpoint& last() const { return last_; }

  /// Where the train loader stands, the same on every rank (sampler.h's EpochPosition): a resumed epoch not
  /// started yet at its checkpoint's place; an epoch under way after the batches taken so far; else (an epoch
  /// end moved the position on) at the epoch's start.
  LoaderState loader_state() const;

  /// --time-budget: the plan (and its re-plans) recorded beside the config, which then holds the run's
  /// --epochs and --max-steps as planned.
  void record_budget(const std::string& budget_json);

 private:
  void save_to(const std::string& path) const;

  const TrainSetup& setup_;
  const Loader& loader_;
  std::string config_json_;
  SavedCheckpoint last_;
  BestCheckpoints best_;
};

} // namespace fastloop
