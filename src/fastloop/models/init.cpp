// torchvision's initialisation of convolutions and BatchNorm layers, and airbench's partial identity (--dirac-init).
#include "fastloop/models/init.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <algorithm>

namespace fastloop {

void init_convs_and_batchnorms(torch::nn::Module& module) {
  namespace nn = torch::nn;
  for (auto& child : module.modules(/*include_self=*/false)) {
    if (auto* c = child->as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = child->as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    }
  }
}

size_t init_convs_dirac(torch::nn::Module& module) {
  size_t changed = 0;
  for (auto& child : module.modules(/*include_self=*/false)) {
    auto* c = child->as<torch::nn::Conv2d>();
    if (!c || c->options.groups() != 1) continue;
    const int64_t n = std::min(c->weight.size(0), c->weight.size(1));
    torch::NoGradGuard no_grad;
    torch::nn::init::dirac_(c->weight.narrow(0, 0, n));  // a view: the first n filters in place
    ++changed;
  }
  return changed;
}

} // namespace fastloop
