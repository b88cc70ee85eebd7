// Model audit for `fastloop doctor --model`: patterns the tuning guide warns about, each with a
// one-line fix — a conv bias that a following BatchNorm cancels, and sizes that are not multiples
// of 8 where tensor cores (fp16/bf16 on CUDA) need them.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct AuditFinding {
  std::string where;   // module name, or "batch"
  std::string what;
  std::string fix;
};

/// `batch_size` 0 skips the batch check; `input_channels` is exempt from the multiple-of-8 rule.
std::vector<AuditFinding> model_audit(torch::nn::Module& model, int64_t batch_size, int64_t input_channels);

} // namespace fastloop
