// `fastloop bench`: seed 001's experiment as a grid of models × rows × repetitions. Each row switches
// one tuning-guide technique on (or, for the baseline, everything off); each cell reports images/s,
// the speedup against the baseline row of the same run, where the time of a step went, peak memory
// and model FLOP utilization. grid.cpp measures the result (result.h); the reporters (report.h) print it.
#pragma once

#include "fastloop/bench/result.h"

#include <string>
#include <vector>

namespace fastloop {

BenchResult bench_run(const BenchOptions& options);

} // namespace fastloop
