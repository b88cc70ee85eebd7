// SmallCNN: the default CPU recipe's model, a residual CNN sized for 28-32 px images on a few CPU
// cores (Fashion-MNIST). Two stages, each conv + BN + ReLU + 2x2 max-pool then a residual pair of
// convs (1 + depth_delta pairs); global max-pool and one Linear. Python twin (depth_delta 0):
// tests/tools/reference_models.py SmallCNN.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <vector>

namespace fastloop {

struct SmallCNNOptions {
  TORCH_ARG(int64_t, in_channels) = 1;
  TORCH_ARG(int64_t, num_classes) = 10;
  /// Channels of the stem, stage 1 and stage 2; training cost grows with their squares. Measured on
  /// 2 Zen 4 cores, batch 128, SGD, NCHW (PyTorch 2.14, same kernels): 16/32/96 trains 943 img/s and
  /// reached 91.4% and 91.6% Fashion-MNIST test accuracy in 4 epochs (default recipe); 32/64/128
  /// trains 403 img/s; 24/48/96 reached 91.8% at 60% of the speed.
  TORCH_ARG(int64_t, stem_width) = 16;
  TORCH_ARG(int64_t, stage1_width) = 32;
  TORCH_ARG(int64_t, stage2_width) = 96;
  /// Residual blocks added to each stage's one (-1: none). Blocks past the first are named res1_2,
  /// res1_3, ... and res2_2, ...: with 0 the names and the state dict are the Python twin's.
  TORCH_ARG(int64_t, depth_delta) = 0;
  /// Each stage as conv, max-pool, BN, ReLU (airbench's order) instead of conv, BN, ReLU, max-pool: BN and
  /// ReLU on a quarter of the values, ~13% faster training steps on 2 AVX-512 cores (float32, batch 128).
  TORCH_ARG(bool, pool_before_bn) = false;
};

class SmallCNNImpl : public ClassifierImpl {
 public:
  explicit SmallCNNImpl(const SmallCNNOptions& options = {});
  at::Tensor forward(at::Tensor x) override;

  SmallCNNOptions options;
  torch::nn::Sequential stem{nullptr};    // conv BN ReLU
  torch::nn::Sequential stage1{nullptr};  // conv BN ReLU max-pool (pool_before_bn: conv max-pool BN ReLU)
  std::vector<torch::nn::Sequential> res1;  // 1 + depth_delta blocks of (conv BN ReLU) x 2, each added to its input
  torch::nn::Sequential stage2{nullptr};
  std::vector<torch::nn::Sequential> res2;
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SmallCNN);

} // namespace fastloop
