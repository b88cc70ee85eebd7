// `fastloop export --checkpoint FILE --out model.safetensors [--fold-bn] [--ema]`: a checkpoint's weights
// (or with --ema their moving average) as safetensors with PyTorch state_dict names, readable by
// safetensors.torch.load_file and load_state_dict.
#include "commands.h"

#include "fastloop/data/source.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/version.h"

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct ExportFlags {
  std::string checkpoint;
  std::string out;
  bool fold_bn = false;
  bool ema = false;
};
}  // namespace

Subcommand export_command(CLI::App& root) {
  auto* app = root.add_subcommand("export", "Write a checkpoint's weights as safetensors (PyTorch state_dict names)");
  auto flags = std::make_shared<ExportFlags>();
  app->add_option("--checkpoint", flags->checkpoint, "checkpoint file written by train")->required();
  app->add_option("--out", flags->out, "safetensors file to write (replaced atomically)")->required();
  app->add_flag("--fold-bn", flags->fold_bn,
                "fold each BatchNorm into the conv before it: the file then fits the same network with "
                "bias=True convs and no BatchNorm (eval-mode outputs unchanged)");
  app->add_flag("--ema", flags->ema, "the EMA of the weights (runs trained with --ema-decay) instead of the weights");
  return {app, [flags] {
            auto checkpoint = Checkpoint::read(flags->checkpoint);
            TrainConfig config;
            config_from_json(config, checkpoint.config_json());
            // Channels and classes are not in the config when they came from the data; the data tells them.
            const DatasetSplits data = data_load(config.data);
            const int64_t classes = config.model.num_classes ? config.model.num_classes : data.test.num_classes;
            Classifier model = model_make_for(config.model, data.test.channels(), classes);
            checkpoint.restore(*model, nullptr, /*rng=*/false);
            if (flags->ema) checkpoint.restore_ema(*model);
            const NamedTensors tensors = model_state_export(*model, flags->fold_bn);
            const SafetensorsMetadata metadata = {{"format", "pt"},
                                                  {"fastloop_version", FASTLOOP_VERSION},
                                                  {"fastloop_config", checkpoint.config_json()},
                                                  {"fastloop_fold_bn", flags->fold_bn ? "true" : "false"},
                                                  {"fastloop_ema", flags->ema ? "true" : "false"}};
            safetensors_write(flags->out, tensors, metadata);
            std::printf("wrote %zu tensors of %s (%s stem, %lld classes) to %s\n", tensors.size(),
                        config.model.name.c_str(), config.model.stem.c_str(), static_cast<long long>(classes),
                        flags->out.c_str());
            return 0;
          }};
}

} // namespace fastloop
