// `fastloop bench --twin MODEL`: a torchscript:FILE cell's repetitions alternate with those of the same row
// on a built-in model (its scripted twin's architecture), so "scripted ÷ built-in" is a ratio of pairs
// measured in one time window, as "fastloop ÷ PyTorch" is, and not of cells measured minutes apart.
#pragma once

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/grid.h"

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// The twin's cell, driven by cell_run() through CellPeer; it holds its own CellRun (model, optimizer,
/// loader), built when the first of its repetitions is due.
class TwinPeer : public CellPeer {
 public:
  TwinPeer(CellPlan plan, const DatasetSplits& data, std::string model);
  ~TwinPeer() override;
  void train_begin() override;
  void train_rep() override;
  void eval_begin() override;
  void eval_rep() override;

  const std::string& model() const { return model_; }
  const std::vector<double>& train_reps() const { return train_reps_; }
  const std::vector<double>& eval_reps() const { return eval_reps_; }

 private:
  CellRun& run();

  CellPlan plan_;
  const DatasetSplits& data_;
  std::string model_;
  std::unique_ptr<CellRun> run_;
  bool trained_ = false;
  std::vector<double> train_reps_, eval_reps_;
};

/// The twin's figures and the pair ratios of a finished cell (twin_* fields of BenchCell).
void twin_cell_fill(BenchCell& cell, const TwinPeer& twin);

} // namespace fastloop
