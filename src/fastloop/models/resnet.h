// ResNet 18/34/50/101 with torchvision's parameter names, so state dicts move between Python and C++.
// The "cifar" stem (kuangliu/pytorch-cifar) keeps 32 px inputs at full resolution into layer1; the
// "imagenet" stem is torchvision's 7x7 stride-2 conv + max-pool.
#pragma once

#include "fastloop/models/classifier.h"
#include "fastloop/models/fold_bn.h"

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace fastloop {

struct ResNetOptions {
  ResNetOptions(int64_t depth = 18) : depth_(depth) {}
  /// 18 and 34 use BasicBlock, 50 and 101 Bottleneck (torchvision v1.5: stride on the 3x3 conv).
  TORCH_ARG(int64_t, depth);
  /// "cifar" or "imagenet", see ModelOptions::stem.
  TORCH_ARG(std::string, stem) = "cifar";
  TORCH_ARG(int64_t, in_channels) = 3;
  TORCH_ARG(int64_t, num_classes) = 10;
  /// Added to every stage's width (64/128/256/512; bottleneck outputs are 4x it). The bench's rec-model
  /// row uses -1 to break the multiples of 8 that tensor cores and vector units want (seed 001).
  TORCH_ARG(int64_t, width_delta) = 0;
};

/// Two 3x3 convs with an identity (or 1x1 conv + BN "downsample") shortcut; expansion 1.
class BasicBlockImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;
  BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride);
  at::Tensor forward(at::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  FoldableBatchNorm2d bn1{nullptr}, bn2{nullptr};
  torch::nn::Sequential downsample{nullptr};  // null when the shortcut is the identity
};
TORCH_MODULE(BasicBlock);

/// 1x1 reduce, 3x3 (carries the stride), 1x1 expand to 4x planes; shortcut as in BasicBlock.
class BottleneckImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;
  BottleneckImpl(int64_t in_planes, int64_t planes, int64_t stride);
  at::Tensor forward(at::Tensor x);

  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr}, conv3{nullptr};
  FoldableBatchNorm2d bn1{nullptr}, bn2{nullptr}, bn3{nullptr};
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(Bottleneck);

class ResNetImpl : public ClassifierImpl {
 public:
  explicit ResNetImpl(const ResNetOptions& options);
  at::Tensor forward(at::Tensor x) override;

  ResNetOptions options;
  torch::nn::Conv2d conv1{nullptr};
  FoldableBatchNorm2d bn1{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr}, layer4{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

} // namespace fastloop
