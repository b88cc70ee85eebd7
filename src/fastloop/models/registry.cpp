// Name → factory for every built-in model. Validation lives here so a bad --model / --stem fails with
// an InputError listing the choices before any work starts.
#include "fastloop/models/registry.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/models/mobilenet_v2.h"
#include "fastloop/models/resnet.h"
#include "fastloop/models/small_cnn.h"

#include <algorithm>

namespace fastloop {

std::vector<std::string> model_names() {
  return {"resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "small_cnn"};
}

std::vector<std::string> model_stems(const std::string& name) {
  const auto names = model_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw InputError("unknown model '" + name + "'; valid models: " + join(names));
  }
  // SmallCNN is made for small images only; an "imagenet" variant would be a different model.
  if (name == "small_cnn") return {"cifar"};
  return {"cifar", "imagenet"};
}

Classifier model_make(const ModelOptions& options) {
  const std::string& name = options.name();
  const auto stems = model_stems(name);
  if (std::find(stems.begin(), stems.end(), options.stem()) == stems.end()) {
    throw InputError("unknown stem '" + options.stem() + "' for model '" + name +
                     "'; valid stems: " + join(stems));
  }
  if (options.in_channels() <= 0 || options.num_classes() <= 0) {
    throw InputError("model '" + name + "' needs in_channels and num_classes > 0, got " +
                     std::to_string(options.in_channels()) + " and " +
                     std::to_string(options.num_classes()));
  }
  if (!(options.dropout() >= 0.0 && options.dropout() < 1.0)) {
    throw InputError("dropout must be in [0, 1), got " + std::to_string(options.dropout()));
  }

  if (name.rfind("resnet", 0) == 0) {
    const int64_t depth = std::stoll(name.substr(6));
    return ResNet(ResNetOptions(depth)
                      .stem(options.stem())
                      .in_channels(options.in_channels())
                      .num_classes(options.num_classes())
                      .width_delta(options.width_delta()))
        .ptr();
  }
  if (name == "mobilenet_v2") {
    return MobileNetV2(MobileNetV2Options()
                           .stem(options.stem())
                           .in_channels(options.in_channels())
                           .num_classes(options.num_classes())
                           .dropout(options.dropout())
                           .width_delta(options.width_delta()))
        .ptr();
  }
  SmallCNNOptions small;
  const int64_t w = options.width_delta();
  return SmallCNN(small.in_channels(options.in_channels()).num_classes(options.num_classes())
                      .stem_width(small.stem_width() + w).stage1_width(small.stage1_width() + w)
                      .stage2_width(small.stage2_width() + w))
      .ptr();
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters(/*recurse=*/true)) count += p.numel();
  return count;
}

Classifier model_make_for(const ModelConfig& config, int64_t in_channels, int64_t data_classes) {
  const int64_t classes = config.num_classes ? config.num_classes : data_classes;
  if (classes < data_classes)
    throw InputError("--num-classes " + std::to_string(classes) + " is fewer than the " +
                     std::to_string(data_classes) + " classes of the data");
  return model_make(ModelOptions(config.name).stem(config.stem).in_channels(in_channels).num_classes(classes)
                        .width_delta(config.width_delta));
}

} // namespace fastloop
