// inference_graph(): trace (torchscript_trace, as `fastloop export --format torchscript` does), freeze,
// optimize_for_inference. Measured with the venv's torch on the 2-core AVX2 EPYC, batch 32 at 224 px, 2
// threads: MobileNetV2 46 → 21 ms per image, ResNet-18 105 → 82 (/tmp scripts of stop 32; the bench's
// end-to-end rows are in bench/results/cpu-2core/predict*.md).
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
