// Where a training step's time goes, for the bench: an optional recorder handed to the trainer's own
// step functions. Each mark() waits for the device and charges the time since the previous mark to one
// phase, so the phases add up to the step. Without a recorder (fastloop train) nothing synchronises.
#pragma once

#include <c10/core/Device.h>

#include <chrono>

namespace fastloop {

/// Seconds per training step split by where the step spent them.
struct TimeSplit {
  double data_wait = 0.0;      // waiting for the loader
  double copy = 0.0;           // host → device copy (0 on CPU, where batches are not copied)
  double forward = 0.0;
  double backward = 0.0;
  double optimizer = 0.0;      // unscale/inf check, update, zero_grad
  double communication = 0.0;  // DDP: waiting for the all-reduces backward started, averaging (not hidden)
  double total() const { return data_wait + copy + forward + backward + optimizer + communication; }
  TimeSplit& operator/=(double n);
};

class PhaseRecorder {
 public:
  using Phase = double TimeSplit::*;
  explicit PhaseRecorder(c10::Device device) : device_(device) { restart(); }

  /// Starts the next phase's clock now (after the device's queued work is done).
  void restart();
  /// Waits for the device, then adds the seconds since the last mark (or restart) to `phase`.
  void mark(Phase phase);

  TimeSplit split;  // summed over every mark since construction

 private:
  c10::Device device_;
  std::chrono::steady_clock::time_point last_;
};

/// Marks `phase` when a recorder is given; nothing otherwise.
inline void phase_mark(PhaseRecorder* recorder, PhaseRecorder::Phase phase) {
  if (recorder) recorder->mark(phase);
}

} // namespace fastloop
