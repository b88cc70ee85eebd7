// Optimizers of a run: LibTorch's SGD (momentum, Nesterov, L2 weight decay) and AdamW,
// made from OptimConfig, with the learning rate (and, cycled, the momentum) set per step by the schedule.
// Weight decay follows timm's param_groups_weight_decay: parameters with ndim <= 1 or a name ending in
// ".bias" (BatchNorm weights and biases, every bias) are not decayed, unless --wd-all. Parameters that do not
// require a gradient (--bn-weight-frozen) are in no group. --bn-bias-lr-scale puts the BatchNorm biases in a last
// group whose LR is that multiple of the schedule's (timm's param_group['lr_scale'], airbench's bias scaler).
#pragma once

#include "fastloop/core/config.h"

#include <torch/ordered_dict.h>
#include <torch/optim/optimizer.h>

#include <memory>
#include <string>
#include <vector>

namespace fastloop {

/// timm's rule: true when `param` (named `name`; empty when unknown) is exempt from weight decay.
bool weight_decay_exempt(const std::string& name, const at::Tensor& param);

/// `fused`: one fused kernel per update over all parameters of a group (FusedSGD / FusedAdamW).
/// Two groups as timm makes them: [no decay, decay] (one group with --wd-all or a zero weight decay), and with
/// config.bn_bias_lr_scale != 1 `bn_biases` (batchnorm_biases()) in a third, last one at config.lr times the scale.
std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config,
                                                        const torch::OrderedDict<std::string, at::Tensor>& params,
                                                        bool fused = false,
                                                        const std::vector<at::Tensor>& bn_biases = {});

/// The same for unnamed parameters: the exemption then goes by ndim alone (every bias is 1-D).
std::unique_ptr<torch::optim::Optimizer> optimizer_make(const OptimConfig& config, std::vector<at::Tensor> params,
                                                        bool fused = false);

/// Each group's multiple of the schedule's LR: config.bn_bias_lr_scale for the group of `bn_biases`, 1 for the others.
std::vector<double> optimizer_lr_scales(const torch::optim::Optimizer& optimizer, const OptimConfig& config,
                                        const std::vector<at::Tensor>& bn_biases);

/// Every group's LR to `lr` times its scale (optimizer_lr_scales; none given: 1 for every group).
void optimizer_set_lr(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& scales = {});

/// SGD's momentum, or AdamW's beta1 (what PyTorch's OneCycleLR cycles), in every group.
void optimizer_set_momentum(torch::optim::Optimizer& optimizer, double momentum);

} // namespace fastloop
