// The model registry: turns a ModelOptions (name, stem, channels, classes) into a Classifier, lists the
// names the CLI and bench accept, and counts parameters for `fastloop models` and the tests.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/models/classifier.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

/// Builds the named model. Throws InputError naming the valid choices on an unknown name or stem, or
/// on non-positive in_channels / num_classes, or a dropout outside [0, 1).
Classifier model_make(const ModelOptions& options);

/// The model of a run for data with `in_channels` channels and `data_classes` classes: the class count
/// is config.num_classes, or the data's when 0; fewer classes than the data has is an InputError.
Classifier model_make_for(const ModelConfig& config, int64_t in_channels, int64_t data_classes);

/// Every name model_make accepts: resnet18, resnet34, resnet50, resnet101, mobilenet_v2, small_cnn.
std::vector<std::string> model_names();

/// The stems a model accepts ("cifar", "imagenet"; small_cnn: "cifar" only). Throws InputError on an
/// unknown name.
std::vector<std::string> model_stems(const std::string& name);

/// Number of scalars in all parameters (trainable or not), buffers excluded.
int64_t parameter_count(const torch::nn::Module& module);

} // namespace fastloop
