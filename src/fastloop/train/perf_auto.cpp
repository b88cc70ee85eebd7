// Rules of --perf auto, each backed by a measurement in the seeds or in this project's bench.
#include "fastloop/train/perf_auto.h"

#include "fastloop/data/sources/source.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>

#include <algorithm>
#include <functional>

namespace fastloop {

PerfHardware perf_hardware_detect() {
  PerfHardware hw;
  hw.cpu = cpu_info();
  hw.cuda = torch::cuda::is_available();
  // sm_80 (Ampere) and newer have bf16 tensor cores; older ones only fp16.
  if (hw.cuda) hw.cuda_major = at::detail::getCUDAHooks().supportsBFloat16ConvolutionWithCuDNNv8() ? 8 : 7;
  return hw;
}

std::vector<std::string> perf_auto_apply(TrainConfig& config, const PerfHardware& hw,
                                         const std::set<std::string>& given) {
  std::vector<std::string> lines;
  // One decision: unless its flag was given on the command line (which wins over auto), set it and say why.
  const auto decide = [&](const std::string& flag, const std::function<std::string()>& set) {
    lines.push_back(given.count(flag) ? flag + " kept as given on the command line" : set());
  };
  auto& p = config.perf;
  decide("--set-to-none", [&] {
    p.set_to_none = true;
    return "set_to_none on: gradients are freed instead of zeroed (bitwise-equal results, less memory traffic)";
  });
  decide("--fused-optim", [&] {
    p.fused_optim = true;
    return "fused optimizer on: one kernel updates all parameters (within 1e-6 of the plain update)";
  });
  const bool video = data_is_video(config.data.source);
  auto video_contiguous = [&] {
    p.channels_last = false;
    return std::string("channels_last off: video clips are 5-D batches, kept contiguous");
  };
  if (!given.count("--device")) p.device = hw.cuda ? "cuda" : "cpu";
  const bool cuda = p.device != "cpu" && hw.cuda;
  if (cuda) {
    decide("--amp", [&] {
      p.amp = hw.cuda_major >= 8 ? "bf16" : "fp16";
      return "amp " + p.amp + ": CUDA compute capability " + std::to_string(hw.cuda_major) +
             (hw.cuda_major >= 8 ? " has bf16 tensor cores (no loss scaling needed)"
                                 : " has fp16 tensor cores; GradScaler guards the range");
    });
    decide("--channels-last", [&] {
      if (video) return video_contiguous();
      p.channels_last = true;
      return std::string("channels_last on: tensor-core convolutions run NHWC; NCHW would add transposes");
    });
    decide("--cudnn-benchmark", [&] {
      p.cudnn_benchmark = true;
      return "cudnn_benchmark on: batch shapes are fixed (drop_last), so the first-step search pays off";
    });
    decide("--tf32", [&] {
      p.tf32 = hw.cuda_major >= 8;
      return std::string("tf32 ") + (p.tf32 ? "on: Ampere or newer runs fp32 matmuls on tensor cores"
                                            : "off: needs compute capability 8.0 or newer");
    });
  } else {
    decide("--amp", [&] {
      p.amp = hw.cpu.native_bf16 ? "bf16" : "off";
      return hw.cpu.native_bf16
                 ? "amp bf16: this CPU has native bf16 (avx512_bf16/amx); bf16 autocast trained the ResNets "
                   "1.6-2.0x and the Fashion-MNIST recipe 2.1x faster than fp32 on a 2-core AVX-512 EPYC "
                   "(bench/results/cpu-2core), first-step losses within 1e-2; a time-budgeted run times "
                   "bf16 and fp32 and keeps the faster"
                 : "amp off: this CPU has no native bf16; bf16 autocast ran 30x slower than fp32 on an "
                   "AVX2-only CPU (PyTorch 1.13)";
    });
    decide("--channels-last", [&] {
      if (video) return video_contiguous();
      const bool small_cnn = config.model.name == "small_cnn";
      p.channels_last = hw.cpu.avx512 || (hw.cpu.avx2 && small_cnn);
      if (hw.cpu.avx512)
        return std::string("channels_last on: oneDNN's NHWC convolutions ran 7% faster than NCHW for small_cnn on "
                           "a 2-core AVX-512 CPU (same results within 1e-5)");
      if (p.channels_last)
        return std::string("channels_last on: small_cnn's training steps ran 1.34x faster in NHWC than in NCHW on a "
                           "2-core AVX2 EPYC (same results within 1e-5)");
      return std::string(hw.cpu.avx2 ? "channels_last off: on this AVX2 CPU measured to pay for small_cnn only"
                                     : "channels_last off: not measured to pay on a CPU without AVX2");
    });
    if (!given.count("--cudnn-benchmark")) p.cudnn_benchmark = false;
    if (!given.count("--tf32")) p.tf32 = false;
  }
  const int64_t cores = hw.cpu.logical_cores;
  decide("--workers", [&] {
    if (!cuda && data_in_memory(config.data.source) && config.data.transform.empty()) {
      config.data.workers = 0;
      return std::string("loader workers 0: the batches are copies of decoded pixels, assembled in the training "
                         "thread; a loader thread took a core from the compute threads (1.07x faster steps without "
                         "it, 2-core EPYC)");
    }
    config.data.workers = std::clamp<int64_t>(cores / 4, 1, 8);
    return "loader workers " + std::to_string(config.data.workers) + ": one per 4 of the " + std::to_string(cores) +
           " usable cores, at least one so loading overlaps the step";
  });
  if (config.run.threads == 0) {
    config.run.threads = std::max<int64_t>(1, cores - (cuda ? config.data.workers : 0));
    lines.push_back("compute threads " + std::to_string(config.run.threads) + ": the usable cores" +
                    std::string(cuda ? " not taken by loader workers" : ""));
  }
  return lines;
}

std::vector<std::string> perf_auto_amp_candidates(const TrainConfig& config, const PerfHardware& hw,
                                                  const std::set<std::string>& given) {
  const PerfConfig& p = config.perf;
  const bool cpu = p.device == "cpu" || !hw.cuda;
  if (p.mode != "auto" || !cpu || !hw.cpu.native_bf16 || given.count("--amp") || p.amp != "bf16") return {};
  return {"bf16", "off"};
}

} // namespace fastloop
