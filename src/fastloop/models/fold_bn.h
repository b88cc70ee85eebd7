// Conv + BatchNorm folding for evaluation: in eval mode a BatchNorm is a per-channel affine map, so it
// can be merged into the convolution before it (weight × γ/√(var+ε), bias β − mean × γ/√(var+ε)) and
// skipped, saving one pass over every activation. Models opt in by using FoldableBatchNorm2d, which
// behaves exactly like torch::nn::BatchNorm2d (same parameters, buffers and names) until folded.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include <string>
#include <vector>

namespace fastloop {

class FoldableBatchNorm2dImpl : public torch::nn::BatchNorm2dImpl {
 public:
  using torch::nn::BatchNorm2dImpl::BatchNorm2dImpl;
  /// The identity while folded into the conv before it, BatchNorm2d otherwise.
  at::Tensor forward(const at::Tensor& input) { return folded_ ? input : torch::nn::BatchNorm2dImpl::forward(input); }

  bool folded_ = false;
};
TORCH_MODULE(FoldableBatchNorm2d);

/// A BatchNorm2d and the Conv2d registered just before it, with matching channels: the pairs folding
/// merges. Registration order is the data flow in every fastloop model (conv1, bn1, ...). A MaxPool2d between
/// them (small_cnn's --pool-before-bn) ends the pair: folding through a max-pool holds only for gamma >= 0.
struct ConvBatchNormPair {
  std::string conv_name, bn_name;
  torch::nn::Conv2dImpl* conv = nullptr;
  torch::nn::BatchNorm2dImpl* bn = nullptr;
};
std::vector<ConvBatchNormPair> conv_batchnorm_pairs(const torch::nn::Module& model);

/// Why --fold-bn cannot apply to `model`, or "" when it can: folding needs a Conv2d followed by a
/// FoldableBatchNorm2d that fastloop sees as modules. A TorchScript model's layers are a compiled graph
/// (its mirror holds tensors, not Conv2d/BatchNorm2d modules), and a registered C++ model may use plain
/// BatchNorm2d; either would be evaluated or exported unfolded, so --fold-bn is refused instead.
std::string fold_bn_unavailable(const torch::nn::Module& model);

/// Throws InputError "--fold-bn: <reason>" when fold_bn_unavailable(model) gives one.
void fold_bn_require(const torch::nn::Module& model);

/// Folds every foldable pair for as long as it lives, then restores the exact weights (bitwise) and
/// the BatchNorms. The model must stay in eval mode meanwhile: folding uses the running statistics.
class BatchNormFolding {
 public:
  explicit BatchNormFolding(torch::nn::Module& model);  // fold_bn_require(model) first
  ~BatchNormFolding();
  BatchNormFolding(const BatchNormFolding&) = delete;
  BatchNormFolding& operator=(const BatchNormFolding&) = delete;

  /// BatchNorms folded (those of type FoldableBatchNorm2d with a conv before them).
  size_t folded() const { return saved_.size(); }

 private:
  struct Saved {
    torch::nn::Conv2dImpl* conv;
    FoldableBatchNorm2dImpl* bn;
    at::Tensor weight, bias;  // the conv's own, restored on destruction
  };
  std::vector<Saved> saved_;
};

} // namespace fastloop
