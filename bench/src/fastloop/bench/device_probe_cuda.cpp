// The CUDA half of device_probe.h: the caching allocator's peak statistics and the device's name and
// driver. Compiled only when LibTorch was built with CUDA (see CMakeLists.txt).
#include "fastloop/bench/device_probe.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>

namespace fastloop::detail {

void cuda_memory_peak_reset(c10::DeviceIndex index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(index);
}

double cuda_memory_peak_bytes(c10::DeviceIndex index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  // Index 0 is StatType::AGGREGATE (all pools); the enum moved between namespaces across LibTorch 2.x.
  return static_cast<double>(stats.allocated_bytes[0].peak);
}

std::string cuda_gpu_name(c10::DeviceIndex index) { return at::cuda::getDeviceProperties(index)->name; }

std::string cuda_gpu_driver() {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  return "CUDA driver " + version(driver) + ", runtime " + version(runtime);
}

}  // namespace fastloop::detail
