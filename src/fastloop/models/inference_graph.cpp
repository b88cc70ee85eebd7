// inference_graph(): trace (torchscript_trace, as `fastloop export --format torchscript` does), freeze,
// optimize_for_inference. On the 2-core AVX2 EPYC it made predict 1.6-2.0x faster on MobileNetV2 and
// 1.15-1.25x on ResNet-18 end to end, and batch-1 latency 0.69x / 0.88x the eager path's
// (bench/results/cpu-2core/predict_*_avx2.md, predict_latency_avx2.md).
#include "fastloop/models/inference_graph.h"

#include "fastloop/io/torchscript_export.h"

#include <torch/csrc/jit/api/module.h>

namespace fastloop {
namespace {

std::string short_reason(const c10::Error& e) {
  const std::string what = e.what_without_backtrace();
  return what.substr(0, what.find('\n')).substr(0, 200);
}

torch::jit::Module optimized(const torch::jit::Module& traced) {
  torch::jit::Module frozen = torch::jit::freeze(traced);
  return torch::jit::optimize_for_inference(frozen);
}

}  // namespace

std::optional<torch::jit::Module> inference_graph(ClassifierImpl& model, const at::Tensor& example, std::string& why_not) {
  try {
    return optimized(torchscript_trace(model, example));
  } catch (const c10::Error& e) {
    why_not = short_reason(e);
    return std::nullopt;
  }
}

std::optional<torch::jit::Module> inference_graph(const torch::jit::Module& script, std::string& why_not) {
  try {
    torch::jit::Module copy = script.clone();
    copy.eval();
    return optimized(copy);
  } catch (const c10::Error& e) {
    why_not = short_reason(e);
    return std::nullopt;
  }
}

} // namespace fastloop
