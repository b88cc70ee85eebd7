// Optimizer construction, parameter groups for weight decay, and per-step learning rate and momentum.
#include "fastloop/train/optim.h"

#include "fastloop/train/fused_optim.h"

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace fastloop {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// timm's param_groups_weight_decay: [{no_decay}, {decay}], empty groups left out; a frozen parameter
/// (requires_grad false: --bn-weight-frozen's BatchNorm weights) is in neither, as timm skips it. The groups
/// carry no options of their own: LibTorch fills a group's options that equal the class defaults (SGD's weight
/// decay 0) from the optimizer's, so the no-decay group gets its weight decay of 0 after construction.
std::vector<torch::optim::OptimizerParamGroup> param_groups(const OptimConfig& config,
                                                            const std::vector<std::string>& names,
                                                            const std::vector<at::Tensor>& params,
                                                            bool& no_decay_first) {
  std::vector<at::Tensor> decay, no_decay;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad()) continue;
    const bool exempt = !config.wd_all && config.weight_decay > 0 && weight_decay_exempt(names[i], params[i]);
    (exempt ? no_decay : decay).push_back(params[i]);
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  no_decay_first = !no_decay.empty();
  if (!no_decay.empty()) groups.emplace_back(no_decay);
  if (!decay.empty()) groups.emplace_back(decay);
  return groups;
}

template <typename Options>
std::unique_ptr<torch::optim::Optimizer> without_decay_in_first_group(std::unique_ptr<torch::optim::Optimizer> optimizer,
                                                                      bool no_decay_first) {
  if (no_decay_first) static_cast<Options&>(optimizer->param_groups().front().options()).weight_decay(0.0);
  return optimizer;
}

std::unique_ptr<torch::optim::Optimizer> make(const OptimConfig& config, const std::vector<std::string>& names,
                                              const std::vector<at::Tensor>& params, bool fused) {
  bool no_decay_first = false;
  auto groups = param_groups(config, names, params, no_decay_first);
  if (config.name == "adamw") {
    auto options = torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay);
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    if (fused) optimizer = std::make_unique<FusedAdamW>(std::move(groups), options);
    else optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups), options);
    return without_decay_in_first_group<torch::optim::AdamWOptions>(std::move(optimizer), no_decay_first);
  }
  TORCH_CHECK(config.name == "sgd", "unknown optimizer '", config.name, "' (sgd, adamw)");
  auto options = torch::optim::SGDOptions(config.lr)
                     .momentum(config.momentum)
                     .nesterov(config.nesterov && config.momentum > 0)
                     .weight_decay(config.weight_decay);
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (fused) optimizer = std::make_unique<FusedSGD>(std::move(groups), options);
  else optimizer = std::make_unique<torch::optim::SGD>(std::move(groups), options);
  return without_decay_in_first_group<torch::optim::SGDOptions>(std::move(optimizer), no_decay_first);
}

}  // namespace

bool weight_decay_exempt(const std::string& name, const at::Tensor& param) {
  return param.dim() <= 1 || ends_with(name, ".bias") || name == "bias";
}

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config,
                                                        const torch::OrderedDict<std::string, at::Tensor>& params,
                                                        bool fused) {
  return make(config, params.keys(), params.values(), fused);
}

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params,
                                                        bool fused) {
  return make(config, std::vector<std::string>(params.size()), params, fused);
}

void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

void optimizer_set_momentum(torch::optim::Optimizer& optimizer, double momentum) {
  for (auto& group : optimizer.param_groups()) {
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) {
      sgd->momentum(momentum);
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&group.options())) {
      adamw->betas(std::make_tuple(momentum, std::get<1>(adamw->betas())));
    }
  }
}

} // namespace fastloop
