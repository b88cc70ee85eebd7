// SmallCNN: the default CPU recipe's model, a residual CNN sized for 28-32 px images on a few CPU
// cores (Fashion-MNIST). Two stages, each conv + BN + ReLU + 2x2 max-pool then a residual pair of
// convs; global max-pool and one Linear. Python twin: tools/reference_models.py SmallCNN.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace fastloop {

struct SmallCNNOptions {
  TORCH_ARG(int64_t, in_channels) = 1;
  TORCH_ARG(int64_t, num_classes) = 10;
  /// Channels of the stem, stage 1 and stage 2. Training cost grows with their squares; the defaults
  /// were picked for speed on 2 CPU cores (see small_cnn.cpp).
  TORCH_ARG(int64_t, stem_width) = 32;
  TORCH_ARG(int64_t, stage1_width) = 64;
  TORCH_ARG(int64_t, stage2_width) = 128;
};

class SmallCNNImpl : public ClassifierImpl {
 public:
  explicit SmallCNNImpl(const SmallCNNOptions& options = {});
  at::Tensor forward(at::Tensor x) override;

  SmallCNNOptions options;
  torch::nn::Sequential stem{nullptr};    // conv BN ReLU
  torch::nn::Sequential stage1{nullptr};  // conv BN ReLU max-pool
  torch::nn::Sequential res1{nullptr};    // (conv BN ReLU) x 2, added to its input
  torch::nn::Sequential stage2{nullptr};
  torch::nn::Sequential res2{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(SmallCNN);

} // namespace fastloop
