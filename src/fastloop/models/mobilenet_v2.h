// MobileNetV2 (width 1.0) with torchvision's parameter names (features.N..., classifier.1), so state
// dicts move between Python and C++. The "cifar" stem is kuangliu/pytorch-cifar's: stride 1 in the first
// conv and in the 24-channel stage; "imagenet" is torchvision's (stride 2 in both).
#pragma once

#include "fastloop/models/classifier.h"
#include "fastloop/models/fold_bn.h"

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

namespace fastloop {

struct MobileNetV2Options {
  /// "cifar" or "imagenet", see ModelOptions::stem.
  TORCH_ARG(std::string, stem) = "cifar";
  TORCH_ARG(int64_t, in_channels) = 3;
  TORCH_ARG(int64_t, num_classes) = 10;
  /// Probability of the Dropout before the final Linear (torchvision: 0.2).
  TORCH_ARG(double, dropout) = 0.2;
  /// Added to every stage's width (32, 16 ... 320, 1280). The bench's rec-model row uses -1 to break the
  /// multiples of 8 that tensor cores and vector units want (seed 001).
  TORCH_ARG(int64_t, width_delta) = 0;
};

/// Conv (no bias) + BN + ReLU6, children named "0" and "1" like torchvision's Conv2dNormActivation.
/// A module of its own because LibTorch cannot nest a Sequential inside a Sequential.
class ConvBNReLU6Impl : public torch::nn::Module {
 public:
  ConvBNReLU6Impl(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups);
  at::Tensor forward(at::Tensor x);

  torch::nn::Conv2d conv{nullptr};
  FoldableBatchNorm2d bn{nullptr};
};
TORCH_MODULE(ConvBNReLU6);

/// Expand 1x1 (skipped at expand ratio 1), depthwise 3x3, project 1x1 + BN; residual when the shape
/// is kept. Children live in `conv` as in torchvision: conv.0.0 (expand conv) ... conv.3 (last BN).
class InvertedResidualImpl : public torch::nn::Module {
 public:
  InvertedResidualImpl(int64_t in, int64_t out, int64_t stride, int64_t expand_ratio);
  at::Tensor forward(at::Tensor x);

  torch::nn::Sequential conv{nullptr};
  bool use_residual;
};
TORCH_MODULE(InvertedResidual);

class MobileNetV2Impl : public ClassifierImpl {
 public:
  explicit MobileNetV2Impl(const MobileNetV2Options& options);
  at::Tensor forward(at::Tensor x) override;

  MobileNetV2Options options;
  torch::nn::Sequential features{nullptr};
  torch::nn::Sequential classifier{nullptr};  // Dropout, Linear
};
TORCH_MODULE(MobileNetV2);

} // namespace fastloop
