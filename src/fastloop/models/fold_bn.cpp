// Conv + BatchNorm folding.
#include "fastloop/models/fold_bn.h"

#include "fastloop/core/errors.h"
#include "fastloop/models/torchscript.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/autograd.h>
#include <torch/nn/modules/pooling.h>

namespace fastloop {

std::vector<ConvBatchNormPair> conv_batchnorm_pairs(const torch::nn::Module& model) {
  std::vector<ConvBatchNormPair> pairs;
  std::string conv_name;
  torch::nn::Conv2dImpl* conv = nullptr;
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (auto* c = item.value()->as<torch::nn::Conv2d>()) {
      conv = c, conv_name = item.key();
      continue;
    }
    if (item.value()->as<torch::nn::MaxPool2d>()) {  // max(a x + b) = a max(x) + b holds only for a >= 0
      conv = nullptr;
      continue;
    }
    auto* bn = item.value()->as<torch::nn::BatchNorm2d>();
    if (bn && conv && conv->options.out_channels() == bn->options.num_features() && bn->options.affine() &&
        bn->options.track_running_stats())
      pairs.push_back({conv_name, item.key(), conv, bn});
    if (bn) conv = nullptr;  // one BatchNorm per conv; anything else between them is left alone too
  }
  return pairs;
}

std::string fold_bn_unavailable(const torch::nn::Module& model) {
  if (const auto* script = dynamic_cast<const TorchScriptClassifierImpl*>(&model))
    return "the TorchScript model " + script->path() + " is a compiled graph whose conv -> BatchNorm structure "
           "fastloop does not see or rewrite; evaluate and export it unfolded (drop --fold-bn), or fold in Python "
           "(torch.fx / torch.ao fuse_modules) before scripting";
  for (const auto& pair : conv_batchnorm_pairs(model))
    if (dynamic_cast<const FoldableBatchNorm2dImpl*>(pair.bn)) return "";
  return "model " + model.name() + " has no Conv2d followed by a fastloop::FoldableBatchNorm2d to fold (a C++ model "
         "opts in by using FoldableBatchNorm2d in place of torch::nn::BatchNorm2d); drop --fold-bn";
}

void fold_bn_require(const torch::nn::Module& model) {
  const std::string reason = fold_bn_unavailable(model);
  if (!reason.empty()) throw InputError("--fold-bn: " + reason);
}

BatchNormFolding::BatchNormFolding(torch::nn::Module& model) {
  fold_bn_require(model);
  torch::NoGradGuard no_grad;  // the folded tensors are plain values, not part of any graph
  for (const auto& pair : conv_batchnorm_pairs(model)) {
    auto* bn = dynamic_cast<FoldableBatchNorm2dImpl*>(pair.bn);
    if (!bn || bn->folded_) continue;
    auto* conv = pair.conv;
    saved_.push_back({conv, bn, conv->weight, conv->bias});
    const at::Tensor scale = bn->weight / (bn->running_var + bn->options.eps()).sqrt();
    at::Tensor shift = bn->bias - bn->running_mean * scale;
    if (conv->bias.defined()) shift = shift + conv->bias * scale;
    // New tensors replace the members (the registered parameters stay untouched for the restore);
    // the memory format of the weight is kept so channels_last models stay channels_last.
    conv->weight = (conv->weight * scale.reshape({-1, 1, 1, 1})).contiguous(conv->weight.suggest_memory_format());
    conv->bias = shift;
    bn->folded_ = true;
  }
}

BatchNormFolding::~BatchNormFolding() {
  for (auto& s : saved_) {
    s.conv->weight = s.weight;
    s.conv->bias = s.bias;
    s.bn->folded_ = false;
  }
}

} // namespace fastloop
