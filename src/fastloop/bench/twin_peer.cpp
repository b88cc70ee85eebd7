// The --twin peer: a built-in model's cell run a repetition at a time between a scripted cell's.
#include "fastloop/bench/twin_peer.h"

#include "fastloop/bench/python_peer.h"

namespace fastloop {

TwinPeer::TwinPeer(CellPlan plan, const DatasetSplits& data, std::string model)
    : plan_(std::move(plan)), data_(data), model_(std::move(model)) {
  plan_.peers.clear();  // the twin's own repetitions only; the grid's peers follow the scripted cell
}

TwinPeer::~TwinPeer() = default;

CellRun& TwinPeer::run() {
  if (!run_) run_ = std::make_unique<CellRun>(plan_, data_);
  return *run_;
}

void TwinPeer::train_begin() { run().train_begin(); }

void TwinPeer::train_rep() {
  RepetitionTimes rep;
  run().train_rep(rep);
  train_reps_.push_back(rep.train_img_per_s);
  trained_ = true;
}

void TwinPeer::eval_begin() {
  if (trained_) run().train_end();
  run().eval_begin();
}

void TwinPeer::eval_rep() {
  RepetitionTimes rep;
  run().eval_rep(rep);
  eval_reps_.push_back(rep.eval_img_per_s);
}

void twin_cell_fill(BenchCell& cell, const TwinPeer& twin) {
  cell.twin = twin.model();
  cell.twin_train_img_per_s_reps = twin.train_reps();
  cell.twin_eval_img_per_s_reps = twin.eval_reps();
  if (!twin.train_reps().empty()) cell.twin_train_img_per_s = lower_median(twin.train_reps());
  if (!twin.eval_reps().empty()) cell.twin_eval_img_per_s = lower_median(twin.eval_reps());
  cell.train_vs_twin = pair_ratio(cell.train_img_per_s_reps, twin.train_reps());
  cell.eval_vs_twin = pair_ratio(cell.eval_img_per_s_reps, twin.eval_reps());
}

} // namespace fastloop
