// Optimizers of a run: LibTorch's SGD (momentum, Nesterov, L2 weight decay) and AdamW,
// made from OptimConfig, with the learning rate set per step by the schedule.
#pragma once

#include "fastloop/core/config.h"

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

namespace fastloop {

/// `fused`: one fused kernel per update over all parameters (FusedSGD / FusedAdamW).
std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params,
                                                        bool fused = false);

void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr);

} // namespace fastloop
