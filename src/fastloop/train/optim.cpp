// Optimizer construction and learning-rate updates.
#include "fastloop/train/optim.h"

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace fastloop {

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params) {
  if (config.name == "adamw") {
    return std::make_unique<torch::optim::AdamW>(
        std::move(params), torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay));
  }
  TORCH_CHECK(config.name == "sgd", "unknown optimizer '", config.name, "' (sgd, adamw)");
  return std::make_unique<torch::optim::SGD>(std::move(params), torch::optim::SGDOptions(config.lr)
                                                                    .momentum(config.momentum)
                                                                    .nesterov(config.nesterov && config.momentum > 0)
                                                                    .weight_decay(config.weight_decay));
}

void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

} // namespace fastloop
