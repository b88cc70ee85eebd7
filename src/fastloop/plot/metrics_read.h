// Reads back the JSON-lines file `fastloop train --metrics FILE` writes (train/metrics.h), for `fastloop
// plot`. A parser of outside input: a malformed line is an InputError naming the file and line.
#pragma once

#include <string>
#include <vector>

namespace fastloop {

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
