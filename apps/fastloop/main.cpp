// fastloop: train and evaluate CNNs on LibTorch with the PyTorch Performance Tuning Guide built in.
// Errors become exit codes in one place (fastloop/run/exit_code.h): bad input 2, a run that cannot go on 3, else 1.
#include "commands.h"

#include "fastloop/run/exit_code.h"
#include "fastloop/core/errors.h"
#include "fastloop/version.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  using namespace fastloop;
  // A rank under a launcher writes into a pipe: line buffering keeps its lines whole and timely.
  if (std::getenv("LOCAL_RANK")) std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App root{"fastloop " FASTLOOP_VERSION ": CNN training on LibTorch with the performance tuning guide built in"};
  root.require_subcommand(1);
  root.set_version_flag("--version", FASTLOOP_VERSION);

  TrainConfig config;
  // `launch ... -- COMMAND`: what follows -- is the ranks' command line, run by launch and not parsed here.
  std::vector<std::string> launched;
  int parsed_argc = argc;
  for (int i = 2; argc > 2 && std::strcmp(argv[1], "launch") == 0 && i < argc; ++i)
    if (std::strcmp(argv[i], "--") == 0) {
      launched.assign(argv + i + 1, argv + argc);
      parsed_argc = i;
      break;
    }
  std::string recipe = config_recipe_from_args(argc, argv);
  std::vector<Subcommand> commands = {train_command(root, config, recipe), eval_command(root, config),
                                      models_command(root), doctor_command(root), bench_command(root, config, recipe),
                                      export_command(root), launch_command(root, launched),
                                      tune_command(root, config, recipe), plot_command(root),
                                      pack_command(root), predict_command(root)};
  try {
    if (!recipe.empty()) config_load_toml(config, recipe);
    root.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = root.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }

  return exit_code_run([&] {
    for (auto& command : commands) {
      if (command.app->parsed()) return command.run();
    }
    return 1;
  });
}
