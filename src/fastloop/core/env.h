// Facts about this machine, process and LibTorch build, shared by `doctor`, `--perf auto`, thread
// defaults and (later) bench headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fastloop {

/// CPU cores this process may run on (its affinity mask), at least 1.
int64_t usable_cores();

/// Applies the intra-op thread count; 0 means usable_cores().
void threads_apply(int64_t threads);

struct CpuInfo {
  std::string model;            // /proc/cpuinfo "model name"
  int64_t logical_cores = 0;    // usable by this process
  bool avx2 = false, avx512 = false;
  bool native_bf16 = false;     // avx512_bf16 or amx_bf16: bf16 matmuls without emulation
  bool native_fp16 = false;     // avx512_fp16 or amx_fp16
};
CpuInfo cpu_info();

struct BuildInfo {
  std::string torch_version;    // e.g. "2.14.1"
  std::map<std::string, std::string> settings;  // at::show_config()'s "Build settings" (USE_CUDA=1, ...)
  std::string show_config;      // the whole text
  bool cuda_available = false;  // a CUDA device is visible now
  int64_t cuda_devices = 0;
};
BuildInfo build_info();

/// Shared libraries of this process whose name mentions a BLAS (from /proc/self/maps), resolved paths.
std::vector<std::string> blas_libraries_loaded();

/// True when `path` is Debian's reference BLAS (netlib), 40x slower at sgemm than OpenBLAS or MKL.
bool is_reference_blas(const std::string& path);

/// Measured GEMM rate on the CPU, GFLOP/s (median of a few n x n x n matmuls), in float32 or, with
/// `bf16`, in bfloat16 (what a bf16 autocast cell's convolutions and matmuls run in).
double cpu_gemm_gflops(int64_t n = 1024, bool bf16 = false);

} // namespace fastloop
