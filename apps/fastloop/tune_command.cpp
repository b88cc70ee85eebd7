// `fastloop tune`: measures settings for one model on this machine and writes the fastest as a recipe.
// Every training flag sets the configuration it starts from (as for `train`); the search flags below.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/out_file.h"
#include "fastloop/tune/tuner.h"

#include <cstdio>
#include <filesystem>
#include <memory>

namespace fastloop {

namespace {

struct TuneFlags {
  std::vector<std::string> batch_sizes;  // "auto" or multiples of 8
  double budget_s = 300.0;
  int64_t trials = 0;
  int64_t warmup_steps = 2;
  int64_t timed_steps = 5;
  std::string out = "tuned.toml";
};

std::string without_toml_extension(const std::string& path) {
  const std::string ext = ".toml";
  return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0
             ? path.substr(0, path.size() - ext.size())
             : path;
}

}  // namespace

Subcommand tune_command(CLI::App& root, TrainConfig& config, std::string& recipe) {
  auto* app = root.add_subcommand("tune", "Measure settings for a model on this machine; write the fastest as a recipe");
  app->add_option("--config", recipe, "TOML recipe to start from; training flags given with it override it");
  config_flags_add(*app, config);
  auto flags = std::make_shared<TuneFlags>();
  app->add_option("--batch-sizes", flags->batch_sizes,
                  "also search the batch size: 'auto' (multiples of 8 near --batch-size) or a list; the LR scales linearly")
      ->delimiter(',');
  app->add_option("--budget-s", flags->budget_s, "seconds to spend; no trial starts that would overrun (0: no limit)")
      ->check(kNonNegative)->capture_default_str();
  app->add_option("--trials", flags->trials, "at most this many trials (0: no limit)")
      ->check(kNonNegative)->capture_default_str();
  app->add_option("--tune-warmup", flags->warmup_steps, "untimed steps per trial")
      ->check(kPositive)->capture_default_str();
  app->add_option("--tune-steps", flags->timed_steps, "timed steps per trial (median)")
      ->check(kPositive)->capture_default_str();
  app->add_option("--out", flags->out, "recipe to write; the trial table goes next to it as .md and .json")
      ->capture_default_str();
  return {app, [flags, &config] {
            TuneOptions options;  // tune_run() validates options.base before any trial
            options.base = config;
            options.budget_s = flags->budget_s;
            options.max_trials = flags->trials;
            options.trial.warmup_steps = flags->warmup_steps;
            options.trial.timed_steps = flags->timed_steps;
            for (const auto& b : flags->batch_sizes) {
              if (b == "auto") {
                options.batch_sizes = tune_batch_sizes_near(config.data.batch_size);
                break;
              }
              try {
                options.batch_sizes.push_back(std::stoll(b));
              } catch (const std::exception&) {
                throw InputError("--batch-sizes: '" + b + "' is neither 'auto' nor a number");
              }
            }
            std::printf("tune: %s on %s, batch %lld, budget %.0f s\n", config.model.name.c_str(),
                        config.data.source.c_str(), static_cast<long long>(config.data.batch_size), flags->budget_s);
            const TuneResult result = tune_run(options, [](const TuneTrial& t) {
              std::printf("  trial %2lld  %-28s %9.1f img/s  %s\n", static_cast<long long>(t.index), t.change.c_str(),
                          t.result.img_per_s, tune_verdict_text(t).c_str());
              std::fflush(stdout);
            });
            const std::string md = tune_markdown(result);
            std::printf("\n%s", md.c_str());
            const std::string stem = without_toml_extension(flags->out);
            const auto dir = std::filesystem::path(flags->out).parent_path();
            std::error_code ignored;  // a folder that cannot be made shows as the write failing below
            if (!dir.empty()) std::filesystem::create_directories(dir, ignored);
            out_file_write(flags->out, tune_recipe_toml(result));
            out_file_write(stem + ".md", md);
            out_file_write(stem + ".json", tune_json(result));
            std::printf("\nwrote %s (train with: fastloop train --config %s), %s.md and %s.json\n", flags->out.c_str(),
                        flags->out.c_str(), stem.c_str(), stem.c_str());
            return 0;
          }};
}

} // namespace fastloop
