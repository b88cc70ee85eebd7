// batchnorm_configure(): one walk over the modules, the momentum and the weight's requires_grad of each BatchNorm.
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

} // namespace fastloop
