// TrainConfig fields as command-line flags (CLI11): one flag per field of config_fields(), with its help
// and allowed values. The fastloop executable and train_main() (for programs of users) share them.
#pragma once

#include "fastloop/core/config.h"

#include <CLI/CLI.hpp>

#include <set>
#include <string>

namespace fastloop {

/// Registers every TrainConfig field as a flag of `command` (one flag per field; bools also as --no-X).
void config_flags_add(CLI::App& command, TrainConfig& config);

/// The flags of config_flags_add() given on this command line ("--amp", ...; "--no-X" counts as "--X").
std::set<std::string> config_flags_given(const CLI::App& command, TrainConfig& config);

/// The value of `--config FILE` (or `--config=FILE`) before any `--`; "" when absent. The recipe is read
/// before the flags that override it are parsed.
std::string config_recipe_from_args(int argc, char** argv);

} // namespace fastloop
