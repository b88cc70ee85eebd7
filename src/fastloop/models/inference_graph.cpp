// inference_graph(): trace (torchscript_trace, as `fastloop export --format torchscript` does), freeze,
// optimize_for_inference. On the 2-core AVX2 EPYC it made predict 1.6-2.0x faster on MobileNetV2 and
// 1.15-1.25x on ResNet-18 end to end, and batch-1 latency 0.69x / 0.88x the eager path's
// (bench/results/cpu-2core/predict_*_avx2.md, predict_latency_avx2.md).
#include "fastloop/models/inference_graph.h"

#include "fastloop/io/torchscript_export.h"

#include <torch/csrc/jit/api/module.h>

namespace fastloop {
namespace {

/// freeze + optimize_for_inference of the script module `make()` gives; nullopt with LibTorch's first
/// line of the reason when the tracer or a pass throws.
template <typename MakeModule>
std::optional<torch::jit::Module> optimized_or_why(MakeModule make, std::string& why_not) {
  try {
    torch::jit::Module frozen = torch::jit::freeze(make());
    return torch::jit::optimize_for_inference(frozen);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    why_not = what.substr(0, what.find('\n')).substr(0, 200);
    return std::nullopt;
  }
}

}  // namespace

std::optional<torch::jit::Module> inference_graph(ClassifierImpl& model, const at::Tensor& example, std::string& why_not) {
  return optimized_or_why([&] { return torchscript_trace(model, example); }, why_not);
}

std::optional<torch::jit::Module> inference_graph(const torch::jit::Module& script, std::string& why_not) {
  return optimized_or_why(
      [&] {
        torch::jit::Module copy = script.clone();
        copy.eval();
        return copy;
      },
      why_not);
}

} // namespace fastloop
