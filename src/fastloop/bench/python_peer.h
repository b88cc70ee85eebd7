// `fastloop bench --compare-python`: runs tools/bench_peer.py, which trains and evaluates the same cells
// in PyTorch Python (same LibTorch kernels, same models, batch, threads and data), and stores its
// images/s next to fastloop's so every report gets a "fastloop ÷ PyTorch" column.
#pragma once

#include "fastloop/bench/grid.h"

#include <string>

namespace fastloop {

/// Sends the measured ("ok") cells of `result` with its batch, steps, warm-up, repetitions, threads,
/// device and data to `python peer_script --cells FILE`, then fills each cell's python_train_img_per_s,
/// python_eval_img_per_s and python_status ("ok" or the peer's "n/a: why") and
/// environment.pytorch_version. Throws std::runtime_error naming the command when the peer cannot start,
/// exits non-zero or prints no JSON result.
void bench_compare_python(BenchResult& result, const std::string& python, const std::string& peer_script);

} // namespace fastloop
