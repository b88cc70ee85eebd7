// batchnorm_configure(): one walk over the modules, the momentum and the weight's requires_grad of each BatchNorm;
// batchnorm_biases(): another, their biases.
#include "fastloop/train/batchnorm_configure.h"

#include "fastloop/core/errors.h"

#include <torch/nn/modules/batchnorm.h>

namespace fastloop {

namespace {

template <typename BatchNorm>
bool batchnorm_set(torch::nn::Module& module, const BatchNormSettings& settings) {
  auto* bn = dynamic_cast<BatchNorm*>(&module);
  if (!bn) return false;
  bn->options.momentum(settings.momentum);
  if (settings.weight_frozen && bn->weight.defined()) bn->weight.set_requires_grad(false);  // affine=false: none
  return true;
}

template <typename BatchNorm>
bool batchnorm_bias(torch::nn::Module& module, std::vector<at::Tensor>& biases) {
  auto* bn = dynamic_cast<BatchNorm*>(&module);
  if (!bn) return false;
  if (bn->bias.defined()) biases.push_back(bn->bias);
  return true;
}

}  // namespace

size_t batchnorm_configure(torch::nn::Module& model, const BatchNormSettings& settings, const std::string& model_name) {
  size_t found = 0;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    found += batchnorm_set<torch::nn::BatchNorm1dImpl>(*module, settings) ||
             batchnorm_set<torch::nn::BatchNorm2dImpl>(*module, settings) ||
             batchnorm_set<torch::nn::BatchNorm3dImpl>(*module, settings);
  }
  const BatchNormSettings defaults;
  if (found == 0 && (settings.weight_frozen || settings.momentum != defaults.momentum)) {
    throw InputError(std::string(settings.weight_frozen ? "--bn-weight-frozen" : "--bn-momentum") + ": model '" +
                     model_name + "' has no BatchNorm module fastloop can reach (a TorchScript model's layers are a "
                     "compiled graph); drop the flag, or set the BatchNorm in the model itself");
  }
  return found;
}

std::vector<at::Tensor> batchnorm_biases(torch::nn::Module& model, const std::string& model_name) {
  std::vector<at::Tensor> biases;
  for (const auto& module : model.modules(/*include_self=*/true)) {
    batchnorm_bias<torch::nn::BatchNorm1dImpl>(*module, biases) ||
        batchnorm_bias<torch::nn::BatchNorm2dImpl>(*module, biases) ||
        batchnorm_bias<torch::nn::BatchNorm3dImpl>(*module, biases);
  }
  if (biases.empty())
    throw InputError("--bn-bias-lr-scale: model '" + model_name + "' has no BatchNorm bias fastloop can reach (a "
                     "TorchScript model's layers are a compiled graph, an affine=False BatchNorm has none); drop the "
                     "flag or set it to 1");
  return biases;
}

} // namespace fastloop
