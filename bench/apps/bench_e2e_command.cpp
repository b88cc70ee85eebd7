// `fastloop bench e2e`: whole training runs of a recipe, fastloop and a plain PyTorch loop interleaved
// (bench/e2e_bench.h). Takes every train flag and --config, so it measures exactly what `train` would run.
#include "../../apps/fastloop/commands.h"
#include "../../apps/fastloop/flag_checks.h"

#include "fastloop/core/python_path.h"
#include "fastloop/bench/e2e_bench.h"
#include "fastloop/core/out_file.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace fastloop {

Subcommand bench_e2e_add(CLI::App& bench, TrainConfig& config, std::string& recipe) {
  auto* app = bench.add_subcommand("e2e", "Whole `train` runs vs a plain PyTorch loop (same model and recipe), "
                                          "interleaved A B B A; the ratio's median and min-max");
  auto options = std::make_shared<E2eBenchOptions>();
  auto out = std::make_shared<std::string>();
  auto no_python = std::make_shared<bool>(false);
  app->add_option("--config", recipe, "TOML recipe, as for train; flags override it");
  config_flags_add(*app, config);
  app->add_option("--repeat", options->repeat, "interleaved pairs (fastloop run, PyTorch run)")
      ->check(kPositive)->capture_default_str();
  app->add_flag("--no-python", *no_python, "fastloop's runs alone");
  app->add_option("--peer", options->peer, "the PyTorch loop")->capture_default_str();
  app->add_option("--out", *out, "write PREFIX.md and PREFIX.json");
  return {app, [&config, options, out, no_python] {
            options->config = config;
            options->compare_python = !*no_python;
            options->python = python_interpreter(options->python);
            const E2eBenchResult result = e2e_bench_run(*options);
            const std::string md = e2e_bench_markdown(result);
            std::printf("%s", md.c_str());
            if (!out->empty()) {
              out_file_write(*out + ".md", md);
              out_file_write(*out + ".json", e2e_bench_json(result));
              std::printf("\nwrote %s.md and %s.json\n", out->c_str(), out->c_str());
            }
            return 0;
          }};
}

} // namespace fastloop
