// `fastloop bench e2e`: whole `fastloop train` runs against a plain PyTorch loop with the same model and
// recipe (bench/peers/train_peer.py), interleaved A B B A in one time window so the machine's drift between
// windows cancels in each pair's ratio. Reports every pair and the ratio's median and min–max.
#pragma once

#include "fastloop/core/config.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct E2eBenchOptions {
  TrainConfig config;                       // the recipe both sides train
  int64_t repeat = 3;                       // pairs (a fastloop run, then a PyTorch run)
  bool compare_python = true;               // false: fastloop's runs alone
  std::string python;  // interpreter for the peer; empty: python_interpreter()'s
  std::string peer = "bench/peers/train_peer.py";
};

struct E2eRun {
  double img_per_s = 0.0;                   // training images per second over the epochs (evaluation excluded)
  double train_seconds = 0.0;
  double test_accuracy = 0.0;               // after the last epoch, fraction
};

struct E2ePair {
  E2eRun fastloop, python;
  double ratio = 0.0;                       // fastloop ÷ PyTorch img/s of this pair (0 without the peer)
};

struct E2eBenchResult {
  E2eBenchOptions options;
  std::vector<E2ePair> pairs;
  double ratio_median = 0.0, ratio_min = 0.0, ratio_max = 0.0;
  std::string peer_command;                 // one PyTorch run, as run
  std::string torch_version;                // the peer's
};

/// The peer's command line for `config`; throws InputError naming a flag the peer cannot mirror.
std::string e2e_peer_command(const E2eBenchOptions& options);

E2eBenchResult e2e_bench_run(const E2eBenchOptions& options);
std::string e2e_bench_markdown(const E2eBenchResult& result);
std::string e2e_bench_json(const E2eBenchResult& result);

} // namespace fastloop
