// The device-independent half of device_probe.h (the CUDA half lives in device_probe_cuda.cpp).
#include "fastloop/bench/device_probe.h"

#include "fastloop/core/compat.h"
#include "fastloop/core/env.h"
#include "fastloop/core/shell.h"
#include "fastloop/core/stats.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fastloop {

namespace {

/// Standard output of `command`, trailing newline removed; "" when it cannot start. The exit status is
/// not looked at: the git commands below print nothing when they fail (not a checkout, no git).
std::string output_trimmed(const std::string& command) {
  std::string out = command_output(command).out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

void device_synchronize(c10::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

void memory_peak_reset(c10::Device device) {
  if (device.is_cuda()) {
    if constexpr (compat::kBuiltWithCuda) detail::cuda_memory_peak_reset(device.index());
    return;
  }
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // resets VmHWM to the current RSS
  clear.flush();
  if (!clear)
    throw std::runtime_error("bench: cannot reset the peak RSS through /proc/self/clear_refs (Linux >= 4.0 needed)");
}

double memory_peak_bytes(c10::Device device) {
  if (device.is_cuda()) {
    if constexpr (compat::kBuiltWithCuda) return detail::cuda_memory_peak_bytes(device.index());
    return 0.0;
  }
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;  // kB in the file
  }
  return 0.0;
}

std::string memory_peak_kind(c10::Device device) {
  return device.is_cuda() ? "cuda_max_allocated" : "process_peak_rss";
}

GemmPeak device_gemm_peak(c10::Device device, c10::ScalarType dtype) {
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kBFloat16 || (dtype == at::kHalf && device.is_cuda()),
              "device_gemm_peak: float32, bf16 (or fp16 on CUDA), not ", dtype);
  const std::string name = dtype == at::kFloat ? "float32" : dtype == at::kBFloat16 ? "bf16" : "fp16";
  GemmPeak peak;
  if (device.is_cpu()) {
    // Without native bf16 (avx512_bf16, AMX) a bf16 matmul is emulated at a few GFLOP/s: 1024^3 took ~15 s
    // of every bench start on an AVX2 CPU, 256^3 measures the same slow path in a fraction of a second.
    const int64_t n = dtype == at::kBFloat16 && !cpu_info().native_bf16 ? 256 : 1024;
    peak.gflops = cpu_gemm_gflops(n, dtype == at::kBFloat16);
    const std::string size = std::to_string(n);
    peak.method = name + " " + size + "x" + size + "x" + size + " matmul on the CPU, median of a few, " +
                  std::to_string(at::get_num_threads()) + " threads";
    return peak;
  }
  // float32 with TF32 off: the precision of the baseline row; AMP rows divide by their own dtype's rate.
  const bool tf32 = at::globalContext().allowTF32CuBLAS();
  at::globalContext().setAllowTF32CuBLAS(false);
  constexpr int64_t n = 8192;
  const auto a = at::randn({n, n}, at::TensorOptions(device).dtype(dtype));
  const auto b = at::randn({n, n}, at::TensorOptions(device).dtype(dtype));
  std::vector<double> rates;
  for (int i = 0; i < 6; ++i) {
    device_synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    auto c = at::mm(a, b);
    device_synchronize(device);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i > 0) rates.push_back(2.0 * n * n * n / s / 1e9);  // the first call is warm-up
  }
  at::globalContext().setAllowTF32CuBLAS(tf32);
  peak.gflops = median(rates);
  peak.method = name + " 8192x8192x8192 matmul on " + gpu_name(device) + (dtype == at::kFloat ? ", TF32 off" : "") +
                ", median of 5";
  return peak;
}

std::string gpu_name(c10::Device device) {
  if constexpr (compat::kBuiltWithCuda) {
    if (device.is_cuda()) return detail::cuda_gpu_name(device.index());
  }
  return "";
}

std::string gpu_driver(c10::Device device) {
  if constexpr (compat::kBuiltWithCuda) {
    if (device.is_cuda()) return detail::cuda_gpu_driver();
  }
  return "";
}

std::string source_commit() {
  const std::string commit = output_trimmed("git rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  const std::string dirty = output_trimmed("git status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? commit : commit + "+dirty";
}

std::string load_average() {
  std::ifstream file("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(file >> one >> five >> fifteen)) return "";
  return one + " " + five + " " + fifteen;
}

} // namespace fastloop
