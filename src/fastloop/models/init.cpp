// torchvision's initialisation of convolutions and BatchNorm layers.
#include "fastloop/models/init.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

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

} // namespace fastloop
