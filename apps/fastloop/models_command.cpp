// `fastloop models`: every model of the registry with its parameter count; `fastloop models FILE.pt`: a
// TorchScript model's parameters and forward FLOPs per image at an input size. FLOPs come from
// models/flops.h, which observes the ATen ops a forward really dispatches through LibTorch's RecordFunction
// (the hook its profiler's with_flops uses): the TorchScript interpreter dispatches every op the same way,
// so a scripted model is counted by the same rule as a built-in one and a scripted twin gives the same number,
// with no graph walk that would have to know each op's shape rules.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/core/errors.h"
#include "fastloop/models/flops.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"

#include "fastloop/core/text.h"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct ModelsFlags {
  std::string file;  // a TorchScript file; empty: list the registry
  std::string stem = "cifar";
  int64_t in_channels = 3;
  int64_t num_classes = 10;
  int64_t image_size = 32;  // pixels, square
};

int describe_file(const ModelsFlags& flags) {
  const std::string name = is_torchscript_name(flags.file) ? flags.file : kTorchScriptPrefix + flags.file;
  Classifier model = model_make(ModelOptions(name).in_channels(flags.in_channels).num_classes(flags.num_classes));
  const std::vector<int64_t> image{flags.in_channels, flags.image_size, flags.image_size};
  model_check_forward(*model, name, image, flags.num_classes);
  const double flops = model_forward_flops(*model, image);
  std::printf("%s: %lld parameters, %.4g MFLOPs per %lldx%lldx%lld image (forward; 1 multiply-add = 2 FLOPs; "
              "convolutions and matrix products)\n",
              name.c_str(), static_cast<long long>(parameter_count(*model)), flops / 1e6,
              static_cast<long long>(flags.in_channels), static_cast<long long>(flags.image_size),
              static_cast<long long>(flags.image_size));
  return 0;
}
}  // namespace

Subcommand models_command(CLI::App& root) {
  auto* app = root.add_subcommand("models", "List the models with their parameter counts, or describe FILE.pt");
  auto flags = std::make_shared<ModelsFlags>();
  app->add_option("file", flags->file, "a TorchScript model (torch.jit.save): its parameters and FLOPs per image");
  app->add_option("--stem", flags->stem, "input stem")->check(CLI::IsMember({"cifar", "imagenet"}))->capture_default_str();
  app->add_option("--in-channels", flags->in_channels, "input channels")->check(kPositive)->capture_default_str();
  app->add_option("--num-classes", flags->num_classes, "classes")->check(kPositive)->capture_default_str();
  app->add_option("--image-size", flags->image_size, "with FILE: side of the square input, pixels")
      ->check(kPositive)->capture_default_str();
  return {app, [flags] {
            if (!flags->file.empty()) return describe_file(*flags);
            std::printf("%-14s %14s   (stem %s, %lld input channels, %lld classes)\n", "model", "parameters",
                        flags->stem.c_str(), static_cast<long long>(flags->in_channels),
                        static_cast<long long>(flags->num_classes));
            for (const auto& name : model_names()) {
              const auto stems = model_stems(name);
              if (std::find(stems.begin(), stems.end(), flags->stem) == stems.end()) {  // small_cnn: cifar only
                std::printf("%-14s %14s   (no %s stem; it has: %s)\n", name.c_str(), "-", flags->stem.c_str(),
                            join(stems).c_str());
                continue;
              }
              auto model = model_make(
                  ModelOptions(name).stem(flags->stem).in_channels(flags->in_channels).num_classes(flags->num_classes));
              std::printf("%-14s %14lld\n", name.c_str(), static_cast<long long>(parameter_count(*model)));
            }
            std::printf("%-14s %14s   (fastloop models FILE.pt for its parameters and FLOPs)\n", "torchscript:FILE", "");
            return 0;
          }};
}

} // namespace fastloop
