// Model FLOPs for the bench's model FLOP utilization: the multiply-adds of convolutions and matrix
// products (linear layers) of one image's forward pass, read from the ops the forward really runs.
// Convention: 1 multiply-add (MAC) = 2 FLOPs. The "0.56 GFLOPs" usually quoted for CIFAR ResNet18 and
// "4.1 GFLOPs" for ResNet50 are multiply-adds; model_forward_flops() returns twice those numbers.
#pragma once

#include "fastloop/models/classifier.h"

#include <ATen/core/Tensor.h>

#include <functional>

namespace fastloop {

/// Multiply-adds of every convolution (plain, grouped, depthwise, transposed) and matrix product
/// (linear, addmm, mm, bmm) that `run` dispatches on this thread. Each layer counts once: an op called
/// inside another counted op (linear → addmm, convolution → _convolution → mkldnn_convolution) is part
/// of the outer one. BatchNorm, activations, pooling and additions are not counted (they are a few
/// percent of a CNN's arithmetic and not GEMM-bound). Observes through a thread-local at::RecordFunction
/// callback, removed on return.
double count_multiply_adds(const std::function<void()>& run);

/// Multiply-adds of one forward pass of a single image of shape `image_shape` = {C, H, W}, run in eval
/// mode under no-grad on the model's device and dtype (the training mode is restored after). Throws
/// InputError when image_shape is not three positive sizes.
double model_forward_macs(ClassifierImpl& model, at::IntArrayRef image_shape);

/// 2 × model_forward_macs: FLOPs of one image's forward pass.
double model_forward_flops(ClassifierImpl& model, at::IntArrayRef image_shape);

} // namespace fastloop
