// Runtime settings. at::set_num_interop_threads may be called once per process, before any
// inter-op work, so a second request for the same count is accepted and another count is refused.
#include "fastloop/train/runtime.h"

#include "fastloop/core/env.h"
#include "fastloop/core/errors.h"
#include "fastloop/core/host_memory.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

namespace fastloop {

c10::Device device_resolve(const std::string& device) {
  const bool cuda = torch::cuda::is_available();
  if (device == "cpu" || (device == "auto" && !cuda)) return c10::Device(c10::kCPU);
  if (device == "cuda" || device == "auto") {
    if (!cuda) throw InputError("--device cuda: no CUDA device is visible to this LibTorch; use --device cpu");
    return c10::Device(c10::kCUDA, 0);
  }
  throw InputError("--device " + device + ": expected auto, cpu or cuda");
}

void runtime_apply(const PerfConfig& perf, int64_t threads) {
  threads_apply(threads);
  if (perf.keep_host_memory) host_memory_keep(int64_t{256} << 20);  // activations up to 256 MiB a block
  if (perf.interop_threads > 0 && static_cast<int64_t>(at::get_num_interop_threads()) != perf.interop_threads) {
    try {
      at::set_num_interop_threads(static_cast<int>(perf.interop_threads));
    } catch (const c10::Error&) {
      throw InputError("--interop-threads " + std::to_string(perf.interop_threads) +
                       ": the inter-op pool already started with " + std::to_string(at::get_num_interop_threads()) +
                       " threads in this process; set it once, before the first run");
    }
  }
  at::globalContext().setBenchmarkCuDNN(perf.cudnn_benchmark);
  at::globalContext().setAllowTF32CuBLAS(perf.tf32);
  at::globalContext().setAllowTF32CuDNN(perf.tf32);
}

void module_to_channels_last(torch::nn::Module& module) {
  at::NoGradGuard no_grad;
  for (auto& p : module.parameters())
    if (p.dim() == 4) p.set_data(p.data().contiguous(at::MemoryFormat::ChannelsLast));
  for (auto& b : module.buffers())
    if (b.dim() == 4) b.set_data(b.data().contiguous(at::MemoryFormat::ChannelsLast));
}

} // namespace fastloop
