// What a run tells its user: a progress bar on a terminal (plain periodic lines otherwise) and,
// with --metrics FILE, JSON lines appended per log interval and per epoch.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace fastloop {

struct StepReport {
  int64_t epoch = 0;          // 0-based
  int64_t epochs = 0;
  int64_t batch = 0;          // batches done in this epoch
  int64_t batches = 0;        // batches per epoch
  int64_t step = 0;           // optimizer steps done in the run
  double train_loss = 0.0;    // mean over the interval
  double img_per_s = 0.0;     // over the interval
  double elapsed_s = 0.0;     // since the run started
  double lr = 0.0;
  double data_wait_s = 0.0;   // time the step waited for the loader over the interval
};

struct EpochReport {
  int64_t epoch = 0;
  int64_t step = 0;
  double train_loss = 0.0;
  double test_loss = 0.0;
  double test_acc = 0.0;      // fraction in [0, 1]
  double img_per_s = 0.0;     // training images per second over the epoch
  double elapsed_s = 0.0;
};

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

/// Appends JSON lines to a file; does nothing when the path is empty.
class MetricsWriter {
 public:
  explicit MetricsWriter(const std::string& path);
  void step(const StepReport& report);
  void epoch(const EpochReport& report);
  /// One line {"kind": kind, ...the fields of `json_object`} (--time-budget's plan and re-plans).
  void record(const std::string& kind, const std::string& json_object);

 private:
  std::ofstream out_;
};

} // namespace fastloop
