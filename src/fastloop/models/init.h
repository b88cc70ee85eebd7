// Weight initialisation shared by the models, as torchvision does it: kaiming-normal (fan-out, ReLU)
// convolutions and BatchNorm at weight 1, bias 0. Linear layers keep their own rules per model. --dirac-init
// then makes each convolution start as a partial identity (airbench).
#pragma once

#include <torch/nn/module.h>

#include <cstddef>

namespace fastloop {

void init_convs_and_batchnorms(torch::nn::Module& module);

/// airbench's identity initialisation: the first min(in, out) filters of every ungrouped Conv2d of `module` set as
/// torch.nn.init.dirac_ does (1 at the kernel's centre on their own input channel, 0 elsewhere); the other filters
/// keep their values. Returns how many convolutions it changed.
size_t init_convs_dirac(torch::nn::Module& module);

} // namespace fastloop
