// `fastloop bench loader`: images/s of the loader alone (no model) over a grid of worker counts and
// augmentation on/off on CIFAR-shaped synthetic data, the CPU cost of batch assembly per image, and
// optionally the same cells through PyTorch's DataLoader (tools/loader_peer.py) for a ratio column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct LoaderBenchOptions {
  std::vector<int64_t> workers{0, 1, 2};
  int64_t batch_size = 128;
  std::string augment = "both";     // both | on | off
  int64_t batches = 300;            // timed batches per repetition of a cell
  int64_t warmup = 5;               // untimed batches first (thread start, first touch)
  int64_t repeats = 3;              // the median repetition is reported
  int64_t images = 10000;           // dataset size; epochs restart as in training
  int64_t python_batches = 40;      // timed batches per cell for the (much slower) PyTorch peer
};

struct LoaderBenchRow {
  int64_t workers = 0;
  bool augment = false;
  double img_per_s = 0.0;           // median over repeats, wall clock
  double cpu_us_per_img = 0.0;      // process CPU time per image, all threads, same repetition
  double pytorch_img_per_s = 0.0;   // 0: not measured
};

struct AssembleBenchRow {
  std::string dtype;                // float32 | float16 | bfloat16
  bool channels_last = false;
  double us_per_img = 0.0;          // one thread, augmented (crop + flip + normalize), median
};

struct LoaderBenchResult {
  LoaderBenchOptions options;
  std::vector<LoaderBenchRow> rows;
  std::vector<AssembleBenchRow> assemble;
  std::string pytorch_version;      // empty: no PyTorch peer run
  std::string machine;              // CPU model and usable cores
  std::string libtorch_version;
};

LoaderBenchResult loader_bench_run(const LoaderBenchOptions& options);

/// Runs `python peer_script` with the same cells and fills pytorch_img_per_s; throws naming the command
/// when it fails or prints no JSON.
void loader_bench_compare_python(LoaderBenchResult& result, const std::string& python, const std::string& peer_script);

std::string loader_bench_json(const LoaderBenchResult& result);
std::string loader_bench_markdown(const LoaderBenchResult& result);

} // namespace fastloop
