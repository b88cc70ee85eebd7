// --bn-weight-frozen and --bn-momentum: airbench's BatchNorm (Keller Jordan's airbench94), whose weight (gamma)
// stays at 1 while the bias is learned, and whose running statistics follow the batch faster (momentum 0.6 in
// its convention, 0.4 in PyTorch's). Applied to a model's BatchNorm modules before its optimizer is made, which
// gives their biases a learning rate of their own with --bn-bias-lr-scale (airbench's 64x).
#pragma once

#include <torch/nn/module.h>

#include <cstddef>
#include <string>
#include <vector>

namespace fastloop {

struct BatchNormSettings {
  bool weight_frozen = false;  // weight: requires_grad false, so the optimizer (optim.h) leaves it out of its groups
  double momentum = 0.1;       // PyTorch's convention: running = (1 - m) * running + m * batch
};

/// Sets every BatchNorm1d/2d/3d of `model` (FoldableBatchNorm2d included) to `settings`. Returns how many it
/// found; throws InputError naming `model_name` when settings other than PyTorch's defaults find none (a
/// TorchScript model's layers are a compiled graph, not modules fastloop can change).
size_t batchnorm_configure(torch::nn::Module& model, const BatchNormSettings& settings, const std::string& model_name);

/// The biases of every BatchNorm1d/2d/3d of `model` that has one (affine), in module order: --bn-bias-lr-scale's
/// optimizer group. Throws InputError naming `model_name` when there is none.
std::vector<at::Tensor> batchnorm_biases(torch::nn::Module& model, const std::string& model_name);

} // namespace fastloop
