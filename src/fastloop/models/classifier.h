// The interface every fastloop model implements: images [N, C, H, W] in, logits [N, classes] out.
// The registry hands models out through it so the trainer needs no knowledge of any architecture.
#pragma once

#include <torch/arg.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>

namespace fastloop {

/// Options shared by every model of the registry.
struct ModelOptions {
  ModelOptions(std::string name) : name_(std::move(name)) {}
  TORCH_ARG(std::string, name);
  /// "cifar": 3x3 stride-1 first conv, no max-pool (for 28-32 px inputs);
  /// "imagenet": the torchvision stem (7x7 stride-2 conv + max-pool for ResNet).
  TORCH_ARG(std::string, stem) = "cifar";
  TORCH_ARG(int64_t, in_channels) = 3;
  TORCH_ARG(int64_t, num_classes) = 10;
  /// Dropout before the classifier where the reference model has one (MobileNetV2: 0.2).
  TORCH_ARG(double, dropout) = 0.2;
  /// Channels added to every stage's width (the bench's rec-model row: -1 leaves no multiple of 8).
  TORCH_ARG(int64_t, width_delta) = 0;
  /// Residual blocks added to each stage (small_cnn only; -1: none); other models refuse a non-zero value.
  TORCH_ARG(int64_t, depth_delta) = 0;
  /// small_cnn only: each stage's conv max-pooled before its BatchNorm and ReLU; other models refuse it.
  TORCH_ARG(bool, pool_before_bn) = false;
};

class ClassifierImpl : public torch::nn::Module {
 public:
  virtual at::Tensor forward(at::Tensor x) = 0;
};

using Classifier = std::shared_ptr<ClassifierImpl>;

} // namespace fastloop
