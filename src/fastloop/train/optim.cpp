// Optimizer construction, parameter groups for weight decay, and per-step learning rate and momentum.
#include "fastloop/train/optim.h"

#include "fastloop/train/fused_optim.h"

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <algorithm>

namespace fastloop {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Where each parameter goes: timm's param_groups_weight_decay, [{no_decay}, {decay}], and --bn-bias-lr-scale's
/// BatchNorm biases last, empty groups left out.
struct GroupLayout {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  bool no_decay_first = false;
  bool scaled_last = false;
};

bool contains(const std::vector<at::Tensor>& tensors, const at::Tensor& t) {
  return std::any_of(tensors.begin(), tensors.end(), [&](const at::Tensor& x) { return x.is_same(t); });
}

/// A frozen parameter (requires_grad false: --bn-weight-frozen's BatchNorm weights) is in no group, as timm skips
/// it. The groups carry no options of their own: LibTorch fills a group's options that equal the class defaults
/// (SGD's weight decay 0) from the optimizer's, so configure_groups() sets the no-decay and scaled groups' after.
GroupLayout param_groups(const OptimConfig& config, const std::vector<std::string>& names,
                         const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& bn_biases) {
  std::vector<at::Tensor> decay, no_decay, scaled;
  const bool scale = config.bn_bias_lr_scale != 1.0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad()) continue;
    const bool exempt = !config.wd_all && config.weight_decay > 0 && weight_decay_exempt(names[i], params[i]);
    (scale && contains(bn_biases, params[i]) ? scaled : exempt ? no_decay : decay).push_back(params[i]);
  }
  GroupLayout layout;
  layout.no_decay_first = !no_decay.empty();
  layout.scaled_last = !scaled.empty();
  for (auto* group : {&no_decay, &decay, &scaled})
    if (!group->empty()) layout.groups.emplace_back(*group);
  return layout;
}

/// The no-decay group's weight decay 0; the scaled group's LR config.lr * scale and weight decay 0 (--wd-all:
/// divided by the scale, so that each step's decay, LR times weight decay, stays as the other groups', as airbench).
template <typename Options>
std::unique_ptr<torch::optim::Optimizer> configure_groups(std::unique_ptr<torch::optim::Optimizer> optimizer,
                                                          const GroupLayout& layout, const OptimConfig& config) {
  auto& groups = optimizer->param_groups();
  if (layout.no_decay_first) static_cast<Options&>(groups.front().options()).weight_decay(0.0);
  if (layout.scaled_last) {
    auto& options = static_cast<Options&>(groups.back().options());
    options.lr(config.lr * config.bn_bias_lr_scale);
    options.weight_decay(config.wd_all ? config.weight_decay / config.bn_bias_lr_scale : 0.0);
  }
  return optimizer;
}

std::unique_ptr<torch::optim::Optimizer> make(const OptimConfig& config, const std::vector<std::string>& names,
                                              const std::vector<at::Tensor>& params,
                                              const std::vector<at::Tensor>& bn_biases, bool fused) {
  GroupLayout layout = param_groups(config, names, params, bn_biases);
  auto groups = std::move(layout.groups);
  if (config.name == "adamw") {
    auto options = torch::optim::AdamWOptions(config.lr).weight_decay(config.weight_decay);
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    if (fused) optimizer = std::make_unique<FusedAdamW>(std::move(groups), options);
    else optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups), options);
    return configure_groups<torch::optim::AdamWOptions>(std::move(optimizer), layout, config);
  }
  TORCH_CHECK(config.name == "sgd", "unknown optimizer '", config.name, "' (sgd, adamw)");
  auto options = torch::optim::SGDOptions(config.lr)
                     .momentum(config.momentum)
                     .nesterov(config.nesterov && config.momentum > 0)
                     .weight_decay(config.weight_decay);
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (fused) optimizer = std::make_unique<FusedSGD>(std::move(groups), options);
  else optimizer = std::make_unique<torch::optim::SGD>(std::move(groups), options);
  return configure_groups<torch::optim::SGDOptions>(std::move(optimizer), layout, config);
}

}  // namespace

bool weight_decay_exempt(const std::string& name, const at::Tensor& param) {
  return param.dim() <= 1 || ends_with(name, ".bias") || name == "bias";
}

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config,
                                                        const torch::OrderedDict<std::string, at::Tensor>& params,
                                                        bool fused, const std::vector<at::Tensor>& bn_biases) {
  return make(config, params.keys(), params.values(), bn_biases, fused);
}

std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params,
                                                        bool fused) {
  return make(config, std::vector<std::string>(params.size()), params, {}, fused);
}

std::vector<double> optimizer_lr_scales(const torch::optim::Optimizer& optimizer, const OptimConfig& config,
                                        const std::vector<at::Tensor>& bn_biases) {
  std::vector<double> scales;
  for (const auto& group : optimizer.param_groups()) {
    const bool scaled = !group.params().empty() && contains(bn_biases, group.params().front());
    scales.push_back(scaled ? config.bn_bias_lr_scale : 1.0);
  }
  return scales;
}

void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(i < scales.size() ? lr * scales[i] : lr);
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
