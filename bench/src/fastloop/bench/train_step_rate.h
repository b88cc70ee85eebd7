// How fast a model trains, as images/s of fastloop's own training step (train_step: forward, loss,
// backward, SGD update; fp32) on random batches: what `fastloop bench loader` compares the loader with to
// say whether it keeps up with training on this machine.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace fastloop {

struct StepRate {
  double img_per_s = 0.0;  // median of the timed steps
  std::string device;      // "cpu" or "cuda:0"
};

/// Times `steps` steps (after one untimed) of `model` (with the ImageNet stem, 1000 classes) on
/// [batch, 3, image_size, image_size] batches on `device`.
StepRate train_step_rate(const std::string& model, int64_t image_size, int64_t batch, int64_t steps, c10::Device device);

} // namespace fastloop
