// SmallCNN layers under the same names as tests/tools/reference_models.py (stem.0, stage1.1, res1.3, fc ...;
// --depth-delta's extra residual blocks res1_2, res2_2 ...), initialised like the torchvision models:
// kaiming-normal fan-out convs, unit BN, default Linear. --pool-before-bn registers each stage as
// conv, max-pool, BN, ReLU (stage1.0, .1, .2, .3): airbench's order, the BN and ReLU on a quarter of the values.
#include "fastloop/models/small_cnn.h"

#include "fastloop/models/fold_bn.h"
#include "fastloop/models/init.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include <string>
#include <vector>

namespace fastloop {
namespace {

namespace nn = torch::nn;

/// Appends conv3x3 (no bias: BN follows) + BN + ReLU, three children as in the Python twin; with
/// pool_after_conv a 2x2 max-pool between the conv and the BN (four children).
void push_conv_bn_relu(nn::Sequential& seq, int64_t in, int64_t out, bool pool_after_conv = false) {
  seq->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false)));
  if (pool_after_conv) seq->push_back(nn::MaxPool2d(2));
  seq->push_back(FoldableBatchNorm2d(out));
  seq->push_back(nn::ReLU(nn::ReLUOptions().inplace(true)));
}

/// A stage: conv3x3 + BN + ReLU + 2x2 max-pool, or (pool_first) conv3x3 + max-pool + BN + ReLU. Max-pooling
/// commutes with ReLU and with a BN whose scale is positive, so the two differ only in the BN's batch statistics
/// (of the pooled values) and in the 4x fewer values BN and ReLU touch. --fold-bn does not fold across the pool.
nn::Sequential stage(int64_t in, int64_t out, bool pool_first) {
  nn::Sequential seq;
  push_conv_bn_relu(seq, in, out, /*pool_after_conv=*/pool_first);
  if (!pool_first) seq->push_back(nn::MaxPool2d(2));
  return seq;
}

/// `count` residual blocks of `width` channels, (conv BN ReLU) x 2 each, registered in `parent` as `name`,
/// name_2, name_3, ...: the first keeps the Python twin's name.
std::vector<nn::Sequential> residual_blocks(nn::Module& parent, const std::string& name, int64_t width,
                                            int64_t count) {
  std::vector<nn::Sequential> blocks;
  for (int64_t i = 0; i < count; ++i) {
    nn::Sequential block;
    push_conv_bn_relu(block, width, width);
    push_conv_bn_relu(block, width, width);
    blocks.push_back(parent.register_module(i == 0 ? name : name + "_" + std::to_string(i + 1), block));
  }
  return blocks;
}

} // namespace

SmallCNNImpl::SmallCNNImpl(const SmallCNNOptions& options_) : options(options_) {
  const int64_t w0 = options.stem_width(), w1 = options.stage1_width(), w2 = options.stage2_width();
  TORCH_CHECK(options.in_channels() > 0 && options.num_classes() > 0 && w0 > 0 && w1 > 0 && w2 > 0,
              "SmallCNN needs positive in_channels, num_classes and widths, got ", options.in_channels(),
              ", ", options.num_classes(), " and ", w0, "/", w1, "/", w2);
  TORCH_CHECK(options.depth_delta() >= -1, "SmallCNN depth_delta must be >= -1 (no residual block), got ",
              options.depth_delta());
  stem = nn::Sequential();
  push_conv_bn_relu(stem, options.in_channels(), w0);
  register_module("stem", stem);
  stage1 = register_module("stage1", stage(w0, w1, options.pool_before_bn()));
  res1 = residual_blocks(*this, "res1", w1, 1 + options.depth_delta());
  stage2 = register_module("stage2", stage(w1, w2, options.pool_before_bn()));
  res2 = residual_blocks(*this, "res2", w2, 1 + options.depth_delta());
  fc = register_module("fc", nn::Linear(w2, options.num_classes()));

  init_convs_and_batchnorms(*this);
}

at::Tensor SmallCNNImpl::forward(at::Tensor x) {
  x = stage1->forward(stem->forward(x));
  for (auto& block : res1) x = x + block->forward(x);
  x = stage2->forward(x);
  for (auto& block : res2) x = x + block->forward(x);
  // Global max rather than average pool: it keeps the strongest local evidence of a 7x7 map.
  return fc(std::get<0>(torch::adaptive_max_pool2d(x, {1, 1})).flatten(1));
}

} // namespace fastloop
