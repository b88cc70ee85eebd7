// `fastloop bench --twin MODEL`: a torchscript:FILE cell's repetitions alternate with those of the same row
// on a built-in model (its scripted twin's architecture), so "scripted ÷ built-in" is a ratio of pairs
// measured in one time window, as "fastloop ÷ PyTorch" is, and not of cells measured minutes apart.
#pragma once

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/result.h"

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

 private:
  CellRun& run();

  CellPlan plan_;
  const DatasetSplits& data_;
  std::string model_;
  std::unique_ptr<CellRun> run_;
  bool trained_ = false;
};

} // namespace fastloop
