// The bench's multi-rank cells. The grid launches N ranks of `fastloop bench --rank-cell FILE` for one
// model and row (dist/launch.h, torchrun's environment on 127.0.0.1); each rank joins the group, measures
// the cell with its model under DistributedDataParallel, and rank 0 writes the measurements to FILE,
// which the grid reads back. Every rank is a fresh process, as in a real distributed run.
#pragma once

#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/result.h"

#include <cstdint>
#include <string>

namespace fastloop {

/// Runs `row` of `model` on `nproc` launched ranks of options.cli with `threads` intra-op threads each.
/// Throws RunError naming the failed rank's exit code when a rank fails.
CellTimes dist_cell_launch(const BenchOptions& options, const std::string& model, const std::string& row,
                           int64_t nproc, int64_t threads);

/// One rank of such a cell (options hold one model and one row; the rank from the environment).
/// Rank 0 writes the measurements to `out_path` (temporary file, then renamed).
void dist_cell_rank_run(const BenchOptions& options, const std::string& out_path);

} // namespace fastloop
