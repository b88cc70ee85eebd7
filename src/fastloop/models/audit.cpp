// Model audit over the leaf modules in registration order (the order forward uses in our models
// and in most Sequential-built ones).
#include "fastloop/models/audit.h"

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

namespace fastloop {

std::vector<AuditFinding> model_audit(torch::nn::Module& model, int64_t batch_size, int64_t input_channels) {
  std::vector<AuditFinding> findings;
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> leaves;
  for (const auto& item : model.named_modules("", /*include_self=*/false))
    if (item.value()->children().empty()) leaves.emplace_back(item.key(), item.value());

  auto not_multiple_of_8 = [&](const std::string& name, const char* what, int64_t value) {
    if (value % 8 == 0) return;
    findings.push_back({name, std::string(what) + " " + std::to_string(value) + " is not a multiple of 8",
                        "round it to " + std::to_string((value + 7) / 8 * 8) +
                            " so fp16/bf16 tensor cores apply (CUDA)"});
  };
  size_t head = leaves.size();  // the classifier's Linear: its out_features is the class count
  for (size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i].second->as<torch::nn::Linear>()) head = i;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const auto& [name, module] = leaves[i];
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      const auto& o = conv->options;
      const bool bn_follows = i + 1 < leaves.size() && leaves[i + 1].second->as<torch::nn::BatchNorm2d>();
      if (o.bias() && bn_follows)
        findings.push_back({name, "conv has a bias, and the BatchNorm after it subtracts the mean anyway",
                            "construct it with .bias(false): saves memory and a kernel per step"});
      if (o.groups() == 1) {
        if (o.in_channels() != input_channels) not_multiple_of_8(name, "input channels", o.in_channels());
        not_multiple_of_8(name, "output channels", o.out_channels());
      }
    } else if (auto* linear = module->as<torch::nn::Linear>()) {
      not_multiple_of_8(name, "in_features", linear->options.in_features());
      if (i != head) not_multiple_of_8(name, "out_features", linear->options.out_features());
    }
  }
  if (batch_size > 0 && batch_size % 8 != 0) not_multiple_of_8("batch", "batch size", batch_size);
  return findings;
}

} // namespace fastloop
