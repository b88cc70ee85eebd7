// `fastloop models`: every model of the registry with its parameter count.
#include "commands.h"

#include "fastloop/models/registry.h"

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct ModelsFlags {
  std::string stem = "cifar";
  int64_t in_channels = 3;
  int64_t num_classes = 10;
};
}  // namespace

Subcommand models_command(CLI::App& root) {
  auto* app = root.add_subcommand("models", "List the models with their parameter counts");
  auto flags = std::make_shared<ModelsFlags>();
  app->add_option("--stem", flags->stem, "input stem")->check(CLI::IsMember({"cifar", "imagenet"}))->capture_default_str();
  app->add_option("--in-channels", flags->in_channels, "input channels")->check(CLI::PositiveNumber)->capture_default_str();
  app->add_option("--num-classes", flags->num_classes, "classes")->check(CLI::PositiveNumber)->capture_default_str();
  return {app, [flags] {
            std::printf("%-14s %14s   (stem %s, %lld input channels, %lld classes)\n", "model", "parameters",
                        flags->stem.c_str(), static_cast<long long>(flags->in_channels),
                        static_cast<long long>(flags->num_classes));
            for (const auto& name : model_names()) {
              auto model = model_make(
                  ModelOptions(name).stem(flags->stem).in_channels(flags->in_channels).num_classes(flags->num_classes));
              std::printf("%-14s %14lld\n", name.c_str(), static_cast<long long>(parameter_count(*model)));
            }
            return 0;
          }};
}

} // namespace fastloop
