// `fastloop bench`'s grid flags, declared once in a table (as llama.cpp registers each flag with its help):
// the command line is made from it, and a multi-rank cell re-emits from it the flags its ranks need.
#pragma once

#include "fastloop/bench/result.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace fastloop {

/// Adds every BenchOptions flag to `app`, bound to the fields of `options`.
void bench_flags_add(CLI::App& app, BenchOptions& options);

/// The flags a rank of a multi-rank cell needs to measure the same cell as `options` say ("--steps", "5",
/// …): every table row marked for the ranks; the cell's model, row and threads are the caller's.
std::vector<std::string> bench_rank_args(const BenchOptions& options);

} // namespace fastloop
