// The --metrics file, one JSON object per line: written by `fastloop train --metrics FILE` (MetricsWriter,
// appending per log interval and per epoch) and read back by `fastloop plot` (metrics_parse). The format
// lives here only, so the writer's keys and the reader's stay one list. The reader parses outside input:
// a malformed line is an InputError naming the file and line.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace fastloop {

/// A "step" line: one per log interval.
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

/// An "epoch" line: one per epoch, after its evaluation (without test_loss and test_acc when --eval-every
/// left the epoch unevaluated).
struct EpochReport {
  int64_t epoch = 0;
  int64_t step = 0;
  double train_loss = 0.0;
  double test_loss = 0.0;
  double test_acc = 0.0;      // fraction in [0, 1]
  double img_per_s = 0.0;     // training images per second over the epoch
  double elapsed_s = 0.0;
  bool evaluated = true;      // false: test_loss and test_acc are not measured
  std::string tta = "off";    // the evaluation's test-time augmentation (off: one forward per image)
};

/// Appends JSON lines to a file, flushed per line; does nothing when the path is empty.
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

/// One line of the file; a value the line does not carry (or wrote as null, e.g. a NaN loss) is NaN.
struct MetricsPoint {
  double step = 0.0;       // optimizer steps done
  double elapsed_s = 0.0;  // seconds since the run started; made monotonic across restarts (see below)
  double train_loss = 0.0, lr = 0.0, img_per_s = 0.0;  // step lines (epoch lines: epoch means)
  double test_loss = 0.0, test_acc = 0.0;              // epoch lines; test_acc a fraction
};

/// A run's step lines (one per log interval) and epoch lines, in file order. A file appended to by a
/// resumed run (--metrics opens for appending) restarts its clock: its later points are shifted to
/// follow on in time, and earlier points at or after the step it resumed at are dropped.
struct MetricsRun {
  std::string name;  // the file, as given
  std::vector<MetricsPoint> steps, epochs;
};

/// Parses `text`; `file` names it in errors. Lines of other kinds are skipped (later versions may add
/// some); a file without any step or epoch line is an error.
MetricsRun metrics_parse(const std::string& text, const std::string& file);
/// Reads and parses `path` (InputError when it cannot be read).
MetricsRun metrics_read(const std::string& path);

} // namespace fastloop
