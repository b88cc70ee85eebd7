// `fastloop doctor [--model M --batch-size B]`: where fastloop, LibTorch and the image codecs were loaded
// from, what this LibTorch build and machine can do, what slows it down, and the one-line fix for each finding.
#include "commands.h"
#include "flag_checks.h"

#include "fastloop/core/env.h"
#include "fastloop/data/codecs/codec_libraries.h"
#include "fastloop/models/audit.h"
#include "fastloop/models/registry.h"
#include "fastloop/version.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>

#include <cstdio>
#include <memory>

namespace fastloop {

namespace {
struct DoctorFlags {
  std::string model;
  std::string stem = "cifar";
  int64_t in_channels = 3;
  int64_t num_classes = 10;
  int64_t batch_size = 0;
};

std::string setting(const BuildInfo& build, const std::string& key) {
  auto it = build.settings.find(key);
  return it == build.settings.end() ? "?" : it->second;
}

void finding(const std::string& what, const std::string& fix) {
  std::printf("  ! %s\n      fix: %s\n", what.c_str(), fix.c_str());
}
}  // namespace

Subcommand doctor_command(CLI::App& root) {
  auto* app = root.add_subcommand("doctor", "Check the LibTorch build, BLAS, threads, bf16/fp16 and a model");
  auto flags = std::make_shared<DoctorFlags>();
  app->add_option("--model", flags->model, "also audit this model (fastloop models lists them)");
  app->add_option("--stem", flags->stem, "stem of the audited model")->check(CLI::IsMember({"cifar", "imagenet"}));
  app->add_option("--in-channels", flags->in_channels, "input channels of the audited model")->check(kPositive);
  app->add_option("--num-classes", flags->num_classes, "classes of the audited model")->check(kPositive);
  app->add_option("--batch-size", flags->batch_size, "batch size to check")->check(kPositive);
  return {app, [flags] {
            int findings = 0;
            const BuildInfo build = build_info();
            // The files the dynamic linker chose: a wheel's own copies, a venv's torch, or the system's.
            std::printf("fastloop %s: %s\n", FASTLOOP_VERSION,
                        library_path_of(reinterpret_cast<const void*>(&build_info)).c_str());
            std::printf("LibTorch %s: %s\n", build.torch_version.c_str(),
                        library_path_of(reinterpret_cast<const void*>(&at::show_config)).c_str());
            std::printf("  CUDA %s (cuDNN %s), NCCL %s, Gloo %s, oneDNN %s, MKL %s, OpenMP %s\n",
                        setting(build, "CUDA_VERSION").c_str(), setting(build, "CUDNN_VERSION").c_str(),
                        setting(build, "USE_NCCL").c_str(), setting(build, "USE_GLOO").c_str(),
                        setting(build, "USE_MKLDNN").c_str(), setting(build, "USE_MKL").c_str(),
                        setting(build, "USE_OPENMP").c_str());
            std::printf("  CUDA devices visible: %lld\n", static_cast<long long>(build.cuda_devices));
            std::printf("image codecs:\n");
            for (const auto& codec : codec_libraries())
              std::printf("  %-15s %s%s: %s\n", (codec.formats + ":").c_str(), codec.name.c_str(),
                          codec.version.empty() ? "" : (" " + codec.version).c_str(),
                          codec.path.empty() ? "(linked statically)" : codec.path.c_str());

            const CpuInfo cpu = cpu_info();
            std::printf("CPU %s, %lld usable cores, AVX2 %s, AVX-512 %s, native bf16 %s, native fp16 %s\n",
                        cpu.model.c_str(), static_cast<long long>(cpu.logical_cores), cpu.avx2 ? "yes" : "no",
                        cpu.avx512 ? "yes" : "no", cpu.native_bf16 ? "yes" : "no", cpu.native_fp16 ? "yes" : "no");
            if (!cpu.native_bf16 && build.cuda_devices == 0) {
              ++findings;
              finding("no native bf16 on this CPU: bf16 autocast is emulated (30x slower than fp32 on AVX2 in PyTorch 1.13)",
                      "keep --amp off on this CPU (--perf auto does)");
            }

            std::printf("BLAS %s, sgemm 1024^3: %.1f GFLOP/s on %d threads\n", setting(build, "BLAS_INFO").c_str(),
                        cpu_gemm_gflops(1024), at::get_num_threads());
            for (const auto& lib : blas_libraries_loaded()) {
              std::printf("  loaded: %s\n", lib.c_str());
              if (is_reference_blas(lib)) {
                ++findings;
                finding("Debian's reference BLAS is in use: sgemm is ~40x slower than with OpenBLAS",
                        "apt-get install libopenblas0-pthread (it becomes the libblas.so.3 alternative)");
              }
            }
            std::printf("threads: %d intra-op, %lld inter-op, %lld usable cores\n", at::get_num_threads(),
                        static_cast<long long>(at::get_num_interop_threads()), static_cast<long long>(cpu.logical_cores));
            if (at::get_num_threads() > cpu.logical_cores) {
              ++findings;
              finding("more intra-op threads than usable cores: threads contend", "--threads " +
                      std::to_string(cpu.logical_cores));
            }

            if (!flags->model.empty()) {
              auto model = model_make(ModelOptions(flags->model)
                                          .stem(flags->stem)
                                          .in_channels(flags->in_channels)
                                          .num_classes(flags->num_classes));
              std::printf("model %s: %lld parameters\n", flags->model.c_str(),
                          static_cast<long long>(parameter_count(*model)));
              for (const auto& f : model_audit(*model, flags->batch_size, flags->in_channels)) {
                ++findings;
                finding(f.where + ": " + f.what, f.fix);
              }
            }
            std::printf("%d finding%s\n", findings, findings == 1 ? "" : "s");
            return 0;
          }};
}

} // namespace fastloop
