// What a run tells its user: a progress bar on a terminal (plain periodic lines otherwise); with
// --metrics FILE, the same reports as JSON lines (io/metrics_file.h, included here for the trainer).
#pragma once

#include "fastloop/io/metrics_file.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace fastloop {

/// Progress on stdout: redraws one line at most every 0.2 s on a terminal, else prints every report.
class Progress {
 public:
  explicit Progress(bool enabled);
  void step(const StepReport& report);
  void epoch(const EpochReport& report, int64_t epochs);

 private:
  bool enabled_;
  bool terminal_;
  std::chrono::steady_clock::time_point last_draw_{};
};

} // namespace fastloop
