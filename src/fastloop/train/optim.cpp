// Optimizer construction and learning-rate updates.
#include "fastloop/train/optim.h"

#include "fastloop/train/fused_optim.h"

namespace fastloop {

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params,
                                                        bool fused) {
  if (config.name == "adamw") {
    auto options = torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay);
    if (fused) return std::make_unique<FusedAdamW>(std::move(params), options);
    return std::make_unique<torch::optim::AdamW>(std::move(params), options);
  }
  TORCH_CHECK(config.name == "sgd", "unknown optimizer '", config.name, "' (sgd, adamw)");
  auto options = torch::optim::SGDOptions(config.lr)
                     .momentum(config.momentum)
                     .nesterov(config.nesterov && config.momentum > 0)
                     .weight_decay(config.weight_decay);
  if (fused) return std::make_unique<FusedSGD>(std::move(params), options);
  return std::make_unique<torch::optim::SGD>(std::move(params), options);
}

void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

} // namespace fastloop
