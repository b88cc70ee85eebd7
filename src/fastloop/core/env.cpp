// Machine, process and build facts, read from /proc, sched_getaffinity and at::show_config().
#include "fastloop/core/env.h"

#include "fastloop/core/stats.h"
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace fastloop {

int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void threads_apply(int64_t threads) {
  at::set_num_threads(static_cast<int>(threads > 0 ? threads : usable_cores()));
}

CpuInfo cpu_info() {
  CpuInfo info;
  info.logical_cores = usable_cores();
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && info.model.empty()) info.model = value;
    if (key == "flags" && flags.empty()) {
      std::istringstream words(value);
      for (std::string w; words >> w;) flags.insert(w);
    }
  }
  info.avx2 = flags.count("avx2") > 0;
  info.avx512 = flags.count("avx512f") > 0;
  info.native_bf16 = flags.count("avx512_bf16") || flags.count("amx_bf16");
  info.native_fp16 = flags.count("avx512_fp16") || flags.count("amx_fp16");
  return info;
}

BuildInfo build_info() {
  BuildInfo info;
  info.torch_version = TORCH_VERSION;
  info.show_config = at::show_config();
  auto begin = info.show_config.find("Build settings:");
  if (begin != std::string::npos) {
    std::istringstream items(info.show_config.substr(begin + 15));
    for (std::string item; std::getline(items, item, ',');) {
      auto eq = item.find('=');
      if (eq == std::string::npos) continue;
      auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(" \n\t"));
        s.erase(s.find_last_not_of(" \n\t") + 1);
        return s;
      };
      info.settings[trim(item.substr(0, eq))] = trim(item.substr(eq + 1));
    }
  }
  info.cuda_available = torch::cuda::is_available();
  info.cuda_devices = info.cuda_available ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
  return info;
}

std::vector<std::string> blas_libraries_loaded() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    std::string name = path.substr(path.rfind('/') + 1);
    const bool cpu_blas = name.find("blas") != std::string::npos && name.find("cublas") == std::string::npos;
    if (cpu_blas || name.find("mkl") != std::string::npos) found.insert(path);
  }
  return {found.begin(), found.end()};
}

bool is_reference_blas(const std::string& path) {
  return path.find("/blas/libblas.so") != std::string::npos;  // Debian's alternatives path for netlib
}

double cpu_gemm_gflops(int64_t n, bool bf16) {
  at::NoGradGuard no_grad;
  const auto options = at::TensorOptions().dtype(bf16 ? at::kBFloat16 : at::kFloat);
  auto a = at::randn({n, n}, options), b = at::randn({n, n}, options), c = at::empty({n, n}, options);
  at::mm_out(c, a, b);  // warm-up: thread pool, packing buffers
  std::vector<double> rates;
  for (int rep = 0; rep < 5; ++rep) {
    auto start = std::chrono::steady_clock::now();
    at::mm_out(c, a, b);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(2.0 * static_cast<double>(n * n * n) / s / 1e9);
  }
  return median(rates);
}

} // namespace fastloop
