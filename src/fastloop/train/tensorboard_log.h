// The run's scalars in TensorBoard (--tensorboard DIR, main rank): what --metrics writes as JSON lines,
// plus the loader-wait share and, under --amp fp16, the loss scale. Flushed at every report, so a
// TensorBoard watching the folder sees each log interval as it ends.
#pragma once

#include "fastloop/io/tensorboard.h"
#include "fastloop/train/metrics.h"

#include <memory>
#include <string>

namespace fastloop {

class TensorBoardLog {
 public:
  /// Does nothing when `dir` is empty (or on ranks other than the main one: pass "").
  TensorBoardLog(const std::string& dir, int64_t start_step);
  /// `data_wait_share`: the interval's loader wait over its duration; `loss_scale` <= 0: no scaler.
  void step(const StepReport& report, double data_wait_share, double loss_scale);
  void epoch(const EpochReport& report);
  /// The event file written; empty when off.
  std::string path() const { return writer_ ? writer_->path() : ""; }

 private:
  std::unique_ptr<TensorBoardWriter> writer_;
};

} // namespace fastloop
