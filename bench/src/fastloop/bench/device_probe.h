// What the bench reads from the device it measures on: peak memory over a window (CUDA's max allocated,
// or the process's peak RSS on the CPU), a sync point for the time split, the GEMM peaks (float32, bf16,
// fp16) that model FLOP utilization divides by, and the header facts (GPU, driver, commit, load).
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <string>

namespace fastloop {

/// Waits for the device's queued work (CUDA); nothing to wait for on the CPU, where ops run synchronously.
void device_synchronize(c10::Device device);

/// Starts a peak-memory window. CUDA: resets the caching allocator's peak. CPU: resets the process's
/// VmHWM by writing "5" to /proc/self/clear_refs (Linux >= 4.0); throws when the kernel refuses.
void memory_peak_reset(c10::Device device);

/// Peak bytes since memory_peak_reset: CUDA max allocated, or the process's VmHWM on the CPU.
double memory_peak_bytes(c10::Device device);

/// "cuda_max_allocated" or "process_peak_rss".
std::string memory_peak_kind(c10::Device device);

/// GEMM rate of the device in GFLOP/s in `dtype` (float32 with TF32 off on CUDA; bf16; fp16 on CUDA), and how
/// it was measured. A cell's model FLOP utilization divides by the rate of the dtype it computes in.
struct GemmPeak {
  double gflops = 0.0;
  std::string method;
};
GemmPeak device_gemm_peak(c10::Device device, c10::ScalarType dtype = c10::kFloat);

/// GPU name and "driver X, runtime Y"; empty strings for the CPU or a build without CUDA.
std::string gpu_name(c10::Device device);
std::string gpu_driver(c10::Device device);

/// The fastloop commit: `git rev-parse --short HEAD` in the working directory, "+dirty" when files differ;
/// "unknown" outside a git checkout.
std::string source_commit();

/// /proc/loadavg's first three fields ("0.52 0.61 0.70"), "" where it cannot be read.
std::string load_average();

namespace detail {
/// Defined in device_probe_cuda.cpp, which CUDA builds alone compile.
void cuda_memory_peak_reset(c10::DeviceIndex index);
double cuda_memory_peak_bytes(c10::DeviceIndex index);
std::string cuda_gpu_name(c10::DeviceIndex index);
std::string cuda_gpu_driver();
}  // namespace detail

} // namespace fastloop
