// --fused-optim: SGD and AdamW whose update is one fused ATen kernel over all parameters of a group
// (_fused_sgd_ / _fused_adamw_, CPU and CUDA) instead of a loop of small per-parameter ops.
// State layout is LibTorch's own SGD/AdamW state, so checkpoints move between fused and plain.
#pragma once

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

namespace fastloop {

class FusedSGD : public torch::optim::SGD {
 public:
  using torch::optim::SGD::SGD;
  at::Tensor step(LossClosure closure = nullptr) override;
};

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  at::Tensor step(LossClosure closure = nullptr) override;
};

} // namespace fastloop
