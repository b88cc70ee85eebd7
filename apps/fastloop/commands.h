// The subcommands of the fastloop executable. Each registers its flags on the root CLI::App and
// returns the function main() runs when it was chosen; library errors propagate to main().
#pragma once

#include "fastloop/run/config_flags.h"
#include "fastloop/core/config.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fastloop {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Subcommand train_command(CLI::App& root, TrainConfig& config, std::string& recipe);
Subcommand eval_command(CLI::App& root, TrainConfig& config);
Subcommand models_command(CLI::App& root);
Subcommand doctor_command(CLI::App& root);
Subcommand bench_command(CLI::App& root, TrainConfig& config, std::string& recipe);
/// `bench e2e`, registered by bench_command.
Subcommand bench_e2e_add(CLI::App& bench, TrainConfig& config, std::string& recipe);
/// `bench latency`, registered by bench_command.
Subcommand bench_latency_add(CLI::App& bench);
Subcommand export_command(CLI::App& root);
/// `predict INPUT...`: top-k classes of images with a trained model.
Subcommand predict_command(CLI::App& root);
/// `pack DIR OUT`: an image folder as WebDataset tar shards.
Subcommand pack_command(CLI::App& root);
Subcommand plot_command(CLI::App& root);
Subcommand tune_command(CLI::App& root, TrainConfig& config, std::string& recipe);
/// `launched`: the command line after `--` (main() keeps it from CLI11's parser).
Subcommand launch_command(CLI::App& root, const std::vector<std::string>& launched);

} // namespace fastloop
