// `fastloop bench`: measurements, not tests. Each kind of benchmark is one sub-subcommand registered
// here (`bench loader` now; the model grid joins later); each prints markdown and, with --out PREFIX,
// writes PREFIX.json and PREFIX.md.
#include "commands.h"

#include "fastloop/bench/loader_bench.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace fastloop {

namespace {

void file_write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("--out: cannot write " + path + "; check the directory");
}

struct LoaderBenchFlags {
  LoaderBenchOptions options;
  bool compare_python = false;
  std::string peer = "tools/loader_peer.py";
  std::string out;
};

Subcommand bench_loader_add(CLI::App& bench) {
  auto* app = bench.add_subcommand("loader", "Images/s of the loader alone over worker counts, augmentation on/off");
  auto flags = std::make_shared<LoaderBenchFlags>();
  auto& o = flags->options;
  app->add_option("--workers", o.workers, "comma-separated loader worker counts")->delimiter(',')->capture_default_str();
  app->add_option("--batch-size", o.batch_size, "images per batch")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--augment", o.augment, "cells with augmentation: both, on, off")
      ->check(CLI::IsMember({"both", "on", "off"}))->capture_default_str();
  app->add_option("--batches", o.batches, "timed batches per repetition")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--repeats", o.repeats, "repetitions per cell (median reported)")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--warmup", o.warmup, "untimed batches first")->check(CLI::NonNegativeNumber)->capture_default_str();
  app->add_option("--images", o.images, "synthetic dataset size")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_flag("--compare-python", flags->compare_python,
                "also run the PyTorch DataLoader peer (python: $FASTLOOP_PYTHON or ./.venv/bin/python)");
  app->add_option("--python-batches", o.python_batches, "timed batches per cell for the PyTorch peer")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--peer", flags->peer, "the PyTorch peer script")->capture_default_str();
  app->add_option("--out", flags->out, "write PREFIX.json and PREFIX.md");
  return {app, [flags] {
            auto result = loader_bench_run(flags->options);
            if (flags->compare_python) {
              const char* env = std::getenv("FASTLOOP_PYTHON");
              loader_bench_compare_python(result, env && *env ? env : "./.venv/bin/python", flags->peer);
            }
            const std::string md = loader_bench_markdown(result);
            std::printf("%s", md.c_str());
            if (!flags->out.empty()) {
              file_write(flags->out + ".json", loader_bench_json(result));
              file_write(flags->out + ".md", md);
              std::printf("\nwrote %s.json and %s.md\n", flags->out.c_str(), flags->out.c_str());
            }
            return 0;
          }};
}

}  // namespace

Subcommand bench_command(CLI::App& root) {
  auto* app = root.add_subcommand("bench", "Benchmarks: `bench loader` (more kinds to come)");
  app->require_subcommand(1);
  std::vector<Subcommand> kinds = {bench_loader_add(*app)};
  return {app, [kinds] {
            for (const auto& kind : kinds) {
              if (kind.app->parsed()) return kind.run();
            }
            return 1;
          }};
}

} // namespace fastloop
