// Timing fastloop's training step on random data (see train_step_rate.h).
#include "fastloop/bench/train_step_rate.h"

#include "fastloop/core/config.h"
#include "fastloop/core/stats.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/step.h"

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace fastloop {

StepRate train_step_rate(const std::string& model_name, int64_t image_size, int64_t batch, int64_t steps, c10::Device device) {
  ModelConfig config;
  config.name = model_name;
  config.stem = "imagenet";
  Classifier model = model_make_for(config, 3, 1000);
  model->to(device);
  model->train();
  OptimConfig optim;
  auto optimizer = optimizer_make(optim, model->named_parameters());
  const auto options = at::TensorOptions(device);
  const at::Tensor images = at::randn({batch, 3, image_size, image_size}, options);
  const at::Tensor labels = at::randint(0, 1000, {batch}, options.dtype(at::kLong));
  std::vector<double> seconds;
  for (int64_t s = 0; s <= steps; ++s) {  // step 0 warms up (allocations, kernel selection)
    const auto start = std::chrono::steady_clock::now();
    train_step(*model, *optimizer, images, labels, 0.0).item<float>();  // item(): waits for the device
    if (s > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return {static_cast<double>(batch) / median(seconds), device.str()};
}

} // namespace fastloop
