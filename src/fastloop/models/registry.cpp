// Name → factory for every built-in model, the models a program registers (model_register) and TorchScript
// files. Validation lives here so a bad --model / --stem fails with an InputError listing the choices
// before any work starts, and the probe forward checks a model fastloop did not build itself.
#include "fastloop/models/registry.h"

#include "fastloop/core/errors.h"
#include "fastloop/core/text.h"
#include "fastloop/models/mobilenet_v2.h"
#include "fastloop/models/resnet.h"
#include "fastloop/models/small_cnn.h"
#include "fastloop/models/torchscript.h"

#include <torch/torch.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <stdexcept>

namespace fastloop {

namespace {

std::vector<std::string> builtin_names() {
  return {"resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "small_cnn"};
}

// The models registered by the program linking fastloop: a process-wide table, as LibTorch's own
// operator and backend registries are, written at start-up and read by every run.
struct Registered {
  std::mutex mutex;
  std::deque<std::pair<std::string, ModelFactory>> factories;  // a deque: pointers to entries stay valid
};
Registered& registered() {
  static Registered table;
  return table;
}

const ModelFactory* registered_factory(const std::string& name) {
  auto& table = registered();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const auto& [registered_name, factory] : table.factories)
    if (registered_name == name) return &factory;  // never removed or moved: the pointer stays valid
  return nullptr;
}

}  // namespace

void model_register(const std::string& name, ModelFactory factory) {
  if (name.empty() || name.find(':') != std::string::npos || !factory)
    throw std::invalid_argument("model_register: a name without ':' and a factory are needed, got '" + name + "'");
  if (model_is_builtin(name) || registered_factory(name))
    throw std::invalid_argument("model_register: '" + name + "' is already a model name");
  auto& table = registered();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.factories.emplace_back(name, std::move(factory));
}

bool model_is_builtin(const std::string& name) {
  const auto names = builtin_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> model_names() {
  auto names = builtin_names();
  auto& table = registered();
  std::lock_guard<std::mutex> lock(table.mutex);
  for (const auto& entry : table.factories) names.push_back(entry.first);
  return names;
}

std::vector<std::string> model_stems(const std::string& name) {
  if (is_torchscript_name(name) || registered_factory(name)) return {"cifar", "imagenet"};
  if (!model_is_builtin(name)) {
    throw InputError("unknown model '" + name + "'; valid models: " + join(model_names()) +
                     ", or torchscript:FILE.pt");
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
  if (options.depth_delta() != 0 && name != "small_cnn") {
    throw InputError("--depth-delta " + std::to_string(options.depth_delta()) + ": model '" + name +
                     "' has no depth option; it adds residual blocks to small_cnn only (drop the flag, or "
                     "use --model small_cnn)");
  }
  if (options.pool_before_bn() && name != "small_cnn") {
    throw InputError("--pool-before-bn: model '" + name + "' has no such option; it reorders small_cnn's stages "
                     "only (drop the flag, or use --model small_cnn)");
  }
  if (options.depth_delta() < -1) {
    throw InputError("--depth-delta must be >= -1 (no residual block per stage), got " +
                     std::to_string(options.depth_delta()));
  }
  if (is_torchscript_name(name)) return torchscript_load(name.substr(std::string(kTorchScriptPrefix).size())).ptr();
  if (const ModelFactory* factory = registered_factory(name)) {
    Classifier model = (*factory)(options);
    if (!model) throw InputError("the factory registered for model '" + name + "' returned no model");
    return model;
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
                      .stage2_width(small.stage2_width() + w).depth_delta(options.depth_delta())
                      .pool_before_bn(options.pool_before_bn()))
      .ptr();
}

void model_check_forward(ClassifierImpl& model, const std::string& name, at::IntArrayRef image_shape, int64_t classes,
                         at::MemoryFormat memory_format, const std::string& input) {
  const auto parameters = model.parameters();
  if (parameters.empty()) throw InputError("model " + name + " has no parameters: nothing to train");
  std::vector<int64_t> shape{2};
  shape.insert(shape.end(), image_shape.begin(), image_shape.end());
  const at::Tensor batch =
      at::zeros(shape, at::TensorOptions(parameters.front().device())).contiguous(memory_format);
  const bool was_training = model.is_training();
  model.eval();  // no running-statistics update, no dropout draw: the run starts from the state it had
  at::Tensor out;
  std::string failure;
  try {
    torch::NoGradGuard no_grad;
    out = model.forward(batch);
  } catch (const InputError&) {
    model.train(was_training);
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    failure = what.substr(0, what.find('\n'));
  }
  model.train(was_training);
  const std::string expected = "; its forward must take " + input + " and return logits [N, " +
                               std::to_string(classes) + "] for the data's " + std::to_string(classes) + " classes";
  if (!failure.empty())
    throw InputError("model " + name + " failed on a probe batch " + c10::str(at::IntArrayRef(shape)) + ": " +
                     failure + expected);
  if (out.dim() != 2 || out.size(0) != 2 || out.size(1) != classes)
    throw InputError("model " + name + " returned " + c10::str(out.sizes()) + " for a probe batch " +
                     c10::str(at::IntArrayRef(shape)) + expected);
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
                        .width_delta(config.width_delta).depth_delta(config.depth_delta)
                        .pool_before_bn(config.pool_before_bn));
}

} // namespace fastloop
