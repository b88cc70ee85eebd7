// --profile FILE --profile-steps A:B: records optimizer steps A..B-1 with LibTorch's Kineto profiler
// (the one behind torch.profiler) and writes a Chrome trace, to open in https://ui.perfetto.dev or
// chrome://tracing: operators with input shapes on the CPU and, on CUDA, the GPU kernels they launched.
// Each recorded step is a "ProfilerStep#N" range, as torch.profiler's schedule marks them.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>

namespace at {
class RecordFunction;
}

namespace fastloop {

struct ProfileSteps {
  int64_t first = 0;  // first optimizer step recorded (0-based)
  int64_t end = 0;    // one past the last
};

/// "A:B" with 0 <= A < B; InputError naming --profile-steps otherwise.
ProfileSteps profile_steps_parse(const std::string& text);

class StepProfiler {
 public:
  /// Off when `path` is empty. `total_steps`: the run's optimizer steps; a range starting at or after the
  /// end is refused before any work (InputError).
  StepProfiler(const std::string& path, const std::string& steps, c10::Device device, int64_t total_steps);
  ~StepProfiler();
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  /// Before each batch of optimizer step `step` (0-based): starts recording at step A and opens the step's
  /// range at its first batch.
  void step_begins(int64_t step);
  /// After optimizer step `step` - 1 (`step`: steps done): ends the step's range; writes the trace at B.
  void step_done(int64_t steps_done);
  /// The run ended: writes what was recorded if B was not reached. True when a trace was written.
  bool finish();
  bool active() const { return active_; }

 private:
  void stop_and_save();
  std::string path_;
  ProfileSteps steps_;
  bool cuda_ = false;
  bool active_ = false;
  bool written_ = false;
  std::string step_name_;                        // the open step range's name: it must outlive the range
  std::unique_ptr<at::RecordFunction> step_range_;
};

} // namespace fastloop
