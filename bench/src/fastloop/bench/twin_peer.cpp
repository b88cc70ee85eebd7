// The --twin peer: a built-in model's cell run a repetition at a time between a scripted cell's.
#include "fastloop/bench/twin_peer.h"

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

} // namespace fastloop
