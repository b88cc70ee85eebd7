// The model registry: turns a ModelOptions (name, stem, channels, classes) into a Classifier, lists the
// names the CLI and bench accept, and counts parameters for `fastloop models` and the tests.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/models/classifier.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fastloop {

/// Makes a model from the run's options (num_classes, in_channels, stem, dropout, width_delta: use what
/// applies). Called once per run, after torch::manual_seed(run.seed), on the CPU.
using ModelFactory = std::function<Classifier(const ModelOptions& options)>;

/// Adds `name` to the registry for this process, so `--model name` (train, eval, export, bench, tune)
/// builds it with `factory` and trains it with the same loop, flags and checkpoints as the built-in models:
///   fastloop::model_register("tiny_mlp", [](const fastloop::ModelOptions& o) { return TinyMlp(o).ptr(); });
/// Throws std::invalid_argument for an empty name, one with ':' or one already registered or built in.
void model_register(const std::string& name, ModelFactory factory);

/// Builds the named model: a built-in, a registered one, or "torchscript:FILE.pt" (models/torchscript.h). Throws InputError naming the valid choices on an unknown name or stem, or
/// on non-positive in_channels / num_classes, a dropout outside [0, 1), or a non-zero depth_delta or
/// pool_before_bn for a model other than small_cnn.
Classifier model_make(const ModelOptions& options);

/// The model of a run for data with `in_channels` channels and `data_classes` classes: the class count
/// is config.num_classes, or the data's when 0; fewer classes than the data has is an InputError.
Classifier model_make_for(const ModelConfig& config, int64_t in_channels, int64_t data_classes);

/// Every name model_make accepts: resnet18, resnet34, resnet50, resnet101, mobilenet_v2, small_cnn, then
/// the registered ones in registration order (and any "torchscript:FILE.pt").
std::vector<std::string> model_names();

/// One of the six models fastloop builds itself (not registered, not TorchScript).
bool model_is_builtin(const std::string& name);

/// The probe every model that is not built in passes before a run trains it: one forward in eval mode,
/// without gradients, of a zero batch [2, C, H, W] (`image_shape` = {C, H, W}; a video clip's {C, T, H, W} or
/// {T, C, H, W}) on the model's device and in `memory_format` must return a Tensor [2, classes]. Throws
/// InputError naming `name`, the batch, what came back (or the forward's own error) and `input`, what its
/// forward must take ("one image batch [N, C, H, W]").
void model_check_forward(ClassifierImpl& model, const std::string& name, at::IntArrayRef image_shape, int64_t classes,
                         at::MemoryFormat memory_format = at::MemoryFormat::Contiguous,
                         const std::string& input = "one image batch [N, C, H, W]");

/// The stems a model accepts ("cifar", "imagenet"; small_cnn: "cifar" only; registered and TorchScript
/// models: both, the factory or the file decides). Throws InputError on an unknown name.
std::vector<std::string> model_stems(const std::string& name);

/// Number of scalars in all parameters (trainable or not), buffers excluded.
int64_t parameter_count(const torch::nn::Module& module);

} // namespace fastloop
