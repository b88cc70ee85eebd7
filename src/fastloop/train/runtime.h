// Process-wide LibTorch settings a run asks for: threads, the device, cuDNN benchmark and TF32,
// and channels_last for a module's parameters and buffers.
#pragma once

#include "fastloop/core/config.h"

#include <c10/core/Device.h>
#include <torch/nn/module.h>

namespace fastloop {

/// The device of `perf.device` ("auto": CUDA when visible); throws InputError for cuda without one.
c10::Device device_resolve(const std::string& device);

/// Applies threads, interop threads, host memory reuse, cuDNN benchmark and TF32 from the config.
void runtime_apply(const PerfConfig& perf, int64_t threads);

/// Converts every 4-D parameter and buffer of `module` to channels_last (NHWC) memory format.
void module_to_channels_last(torch::nn::Module& module);

} // namespace fastloop
