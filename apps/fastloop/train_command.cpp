// `fastloop train`: the training loop's flags; train_run() (fastloop/run/train_main.h) does the rest.
#include "commands.h"

#include "fastloop/run/train_main.h"

namespace fastloop {

Subcommand train_command(CLI::App& root, TrainConfig& config, std::string& recipe) {
  auto* app = root.add_subcommand("train", "Train a model (no flags: the default Fashion-MNIST recipe)");
  app->add_option("--config", recipe, "TOML recipe (see recipes/); flags given with it override it");
  config_flags_add(*app, config);
  return {app, [app, &config] { return train_exit_code(train_run(config, config_flags_given(*app, config))); }};
}

} // namespace fastloop
