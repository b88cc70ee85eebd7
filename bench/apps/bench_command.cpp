// `fastloop bench`: measurements, not tests. The default is the grid of seed 001 (models × rows ×
// repetitions; bench/grid.h), printed as markdown and, with --out PREFIX, written as PREFIX.md/.csv/.json/
// .html. `bench loader` times the loader alone. Flags are registered once each, with their help, as in
// llama-bench.
#include "../../apps/fastloop/commands.h"
#include "../../apps/fastloop/flag_checks.h"

#include "fastloop/bench/bench_flags.h"
#include "fastloop/bench/dist_cell.h"
#include "fastloop/bench/grid.h"
#include "fastloop/bench/loader_bench.h"
#include "fastloop/bench/report.h"
#include "fastloop/bench/rows.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/out_file.h"
#include "fastloop/core/python_path.h"
#include "fastloop/dist/launch.h"
#include "fastloop/train/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace fastloop {

namespace {

struct LoaderBenchFlags {
  LoaderBenchOptions options;
  bool compare_python = false;
  std::string peer = "bench/peers/loader_peer.py";
  std::string out;
};

Subcommand bench_loader_add(CLI::App& bench) {
  auto* app = bench.add_subcommand("loader", "Images/s of the loader alone over worker counts, augmentation on/off "
                                              "(synthetic data, or --data imagefolder:DIR / shards:DIR)");
  auto flags = std::make_shared<LoaderBenchFlags>();
  auto& o = flags->options;
  app->add_option("--workers", o.workers, "comma-separated loader worker counts")->delimiter(',')->capture_default_str();
  app->add_option("--batch-size", o.batch_size, "images per batch")->check(kPositive)->capture_default_str();
  app->add_option("--augment", o.augment, "cells with augmentation: both, on, off")
      ->check(CLI::IsMember({"both", "on", "off"}))->capture_default_str();
  app->add_option("--batches", o.batches, "timed batches per repetition; 0: 300 (synthetic), 20 (image files)")
      ->check(kNonNegative)->capture_default_str();
  app->add_option("--repeats", o.repeats, "repetitions per cell (median reported)")->check(kPositive)->capture_default_str();
  app->add_option("--warmup", o.warmup, "untimed batches first")->check(kNonNegative)->capture_default_str();
  app->add_option("--images", o.images, "synthetic dataset size")->check(kPositive)->capture_default_str();
  app->add_option("--data", o.data, "a --data spec instead of synthetic data: imagefolder:DIR, shards:DIR, cifar10:DIR, ...");
  app->add_option("--image-size", o.image_size, "image files: output side (pixels)")->check(CLI::Range(8, 4096))->capture_default_str();
  app->add_option("--decode", o.decode, "image files: JPEG decoding, as fastloop train's --decode: exact (full scale, "
                  "torchvision's pixels) or fast (the smallest DCT scale that covers the first resize)")
      ->check(CLI::IsMember({"exact", "fast"}))->capture_default_str();
  app->add_option("--step-model", o.step_model, "image files: the model whose training step (at --image-size) the loader "
                  "must keep up with; '' skips it")->capture_default_str();
  app->add_option("--step-batch", o.step_batch, "images per timed training step")->check(kPositive)->capture_default_str();
  app->add_flag("--decode-limit", o.decode_limit, "image files: also time the decode alone (the same JPEGs in memory, "
                "regions and DCT scale, one thread per worker, no transform) and give the loader's share of it");
  app->add_flag("--compare-python", flags->compare_python,
                "also run the PyTorch DataLoader peer (python: $FASTLOOP_PYTHON or ./.venv/bin/python)");
  app->add_option("--python-batches", o.python_batches, "timed batches per cell for the PyTorch peer; 0: 40 (synthetic), 20 (image files)")
      ->check(kNonNegative)->capture_default_str();
  app->add_option("--peer", flags->peer, "the PyTorch peer script")->capture_default_str();
  app->add_option("--out", flags->out, "write PREFIX.json and PREFIX.md");
  return {app, [flags] {
            auto result = loader_bench_run(flags->options);
            if (flags->compare_python) {
              loader_bench_compare_python(result, python_interpreter(), flags->peer);
            }
            const std::string md = loader_bench_markdown(result);
            std::printf("%s", md.c_str());
            if (!flags->out.empty()) {
              out_file_write(flags->out + ".json", loader_bench_json(result));
              out_file_write(flags->out + ".md", md);
              std::printf("\nwrote %s.json and %s.md\n", flags->out.c_str(), flags->out.c_str());
            }
            return 0;
          }};
}

struct GridFlags {
  BenchOptions options;
  std::vector<std::string> rows{"all"};
  std::string peer = "bench/peers/bench_peer.py";
  std::string out;
  std::string rank_cell;  // set by a multi-rank cell's launcher: this process is one of its ranks
};

// On the CPU, seed 001's batch 128 would take hours for the 4-model grid (ResNet101 trains ~8 img/s on
// 2 cores); these defaults finish it in about 15 minutes there. Flags given explicitly always win.
constexpr int64_t kCpuBatchSize = 16, kCpuSteps = 3, kCpuEvalSteps = 3, kCpuWarmup = 1;

void grid_flags_add(CLI::App& app, GridFlags& flags) {
  bench_flags_add(app, flags.options);  // the BenchOptions fields, from the bench's one flag table
  app.add_option("--rows", flags.rows, "comma-separated rows, or all: " + [] {
        std::string names;
        for (const auto& n : bench_row_names()) names += (names.empty() ? "" : ",") + n;
        return names;
      }())->delimiter(',')->capture_default_str();
  app.add_option("--peer", flags.peer, "the PyTorch peer script")->capture_default_str();
  app.add_option("--out", flags.out, "write PREFIX.md, PREFIX.csv, PREFIX.json and PREFIX.html");
  app.add_option("--rank-cell", flags.rank_cell, "internal: one rank of a multi-rank cell, rank 0 writes FILE")->group("");
}

int grid_run(const CLI::App& app, GridFlags& flags) {
  BenchOptions options = flags.options;
  options.rows.clear();
  for (const auto& row : flags.rows)
    if (row != "all") options.rows.push_back(row);
  if (options.rows.size() != flags.rows.size() && !options.rows.empty())
    throw InputError("--rows: 'all' cannot be combined with other rows");
  if (!flags.rank_cell.empty()) {
    dist_cell_rank_run(options, flags.rank_cell);
    return 0;
  }
  options.cli = self_executable();  // runs the ranks of multi-rank cells
  const bool cpu = !device_resolve(options.device).is_cuda();
  auto given = [&](const char* flag) { return app.count(flag) > 0; };
  if (cpu && !options.full) {
    if (!given("--batch-size")) options.batch_size = kCpuBatchSize;
    if (!given("--steps")) options.steps = kCpuSteps;
    if (!given("--eval-steps")) options.eval_steps = kCpuEvalSteps;
    if (!given("--warmup")) options.warmup = kCpuWarmup;
  }
  std::string command = "fastloop bench";
  for (const auto* option : app.get_options()) {
    if (option->count() == 0 || option->get_name() == "--help") continue;
    command += " " + option->get_name();
    if (option->get_expected_min() == 0) continue;  // a flag
    std::string values;
    for (const auto& value : option->results()) values += (values.empty() ? "" : ",") + value;
    command += " " + values;
  }
  options.python = python_interpreter(options.python);
  options.peer = flags.peer;
  if (!flags.out.empty()) {  // each cell's result on disk as soon as it is measured
    options.on_cell = [&](const BenchResult& partial) {
      BenchResult copy = partial;
      copy.environment.command = command + "  (in progress: " + std::to_string(partial.cells.size()) + " cells so far)";
      bench_write_reports(copy, flags.out);
    };
  }
  BenchResult result = bench_run(options);
  result.environment.command = command;
  const std::string md = bench_markdown(result);
  std::printf("%s", md.c_str());
  if (!flags.out.empty()) {
    for (const auto& path : bench_write_reports(result, flags.out)) std::printf("wrote %s\n", path.c_str());
  }
  return 0;
}

}  // namespace

Subcommand bench_command(CLI::App& root, TrainConfig& config, std::string& recipe) {
  auto* app = root.add_subcommand("bench", "Seed 001's grid: models x rows x repetitions (default); `bench loader`: the loader alone; "
                                            "`bench e2e`: whole train runs vs a plain PyTorch loop");
  app->require_subcommand(0, 1);
  auto flags = std::make_shared<GridFlags>();
  grid_flags_add(*app, *flags);
  std::vector<Subcommand> kinds = {bench_loader_add(*app), bench_e2e_add(*app, config, recipe), bench_latency_add(*app)};
  return {app, [app, kinds, flags] {
            for (const auto& kind : kinds) {
              if (kind.app->parsed()) return kind.run();
            }
            return grid_run(*app, *flags);
          }};
}

} // namespace fastloop
