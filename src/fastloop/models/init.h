// Weight initialisation shared by the models, as torchvision does it: kaiming-normal (fan-out, ReLU)
// convolutions and BatchNorm at weight 1, bias 0. Linear layers keep their own rules per model.
#pragma once

#include <torch/nn/module.h>

namespace fastloop {

void init_convs_and_batchnorms(torch::nn::Module& module);

} // namespace fastloop
