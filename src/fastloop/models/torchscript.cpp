// TorchScript models: loading with checks that name the file, the nn::Module mirror of a script module,
// and the graph executor settings. The frozen-mode check walks the inlined forward graph because that is
// where torch.jit.trace leaves its evidence: BatchNorm/Dropout with a constant training flag.
#include "fastloop/models/torchscript.h"

#include "fastloop/core/errors.h"

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/graph_iterator.h>
#include <torch/csrc/jit/serialization/import.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fastloop {

namespace {

/// Registers the script module's own parameters, buffers and children on `into`, sharing every tensor.
void mirror_into(torch::nn::Module& into, const torch::jit::Module& from) {
  for (const auto& p : from.named_parameters(/*recurse=*/false))
    if (p.value.defined()) into.register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : from.named_buffers(/*recurse=*/false))
    if (b.value.defined()) into.register_buffer(b.name, b.value);
  for (const auto& child : from.named_children()) {
    const auto type = child.value.type()->name();
    auto mirror = std::make_shared<torch::nn::Module>(type ? type->name() : "ScriptModule");
    mirror_into(*mirror, child.value);
    into.register_module(child.name, mirror);
  }
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

/// forward(self, x: Tensor) -> Tensor, or an InputError saying what the file's forward is instead.
void check_signature(const torch::jit::Module& module, const std::string& path) {
  const auto method = module.find_method("forward");
  if (!method)
    throw InputError("TorchScript model " + path + " has no forward method; save a module with "
                     "torch.jit.save(torch.jit.script(model), path)");
  const c10::FunctionSchema& schema = method->function().getSchema();
  const auto& args = schema.arguments();  // args[0] is self
  const bool one_tensor = args.size() == 2 && args[1].type()->isSubtypeOf(*c10::TensorType::get());
  const bool returns_tensor =
      schema.returns().size() == 1 && schema.returns()[0].type()->isSubtypeOf(*c10::TensorType::get());
  if (!one_tensor || !returns_tensor)
    throw InputError("TorchScript model " + path + ": forward must take one image batch Tensor [N, C, H, W] and "
                     "return one logits Tensor [N, classes]; its signature is " + c10::str(schema));
}

/// BatchNorm (input 5) and Dropout (input 2) read their mode from `self.training` in a scripted module;
/// torch.jit.trace freezes it to the constant it saw.
void check_modes_not_frozen(const torch::jit::Module& module, const std::string& path) {
  auto graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  torch::jit::DepthFirstGraphNodeIterator it(graph);
  for (torch::jit::Node* node = it.next(); node != nullptr; node = it.next()) {
    const std::string kind = node->kind().toQualString();
    size_t mode_input = 0;
    if (kind == "aten::batch_norm" || kind == "aten::instance_norm") mode_input = 5;
    else if (kind == "aten::dropout" || kind == "aten::feature_dropout" || kind == "aten::alpha_dropout") mode_input = 2;
    if (mode_input == 0 || node->inputs().size() <= mode_input) continue;
    const auto mode = torch::jit::toIValue(node->input(mode_input));
    if (!mode || !mode->isBool()) continue;
    if (mode_input == 2) {  // a dropout of constant p = 0 does nothing in either mode
      const auto p = torch::jit::toIValue(node->input(1));
      if (p && p->isDouble() && p->toDouble() == 0.0) continue;
    }
    throw InputError("TorchScript model " + path + ": its " + kind + " runs with training=" +
                     (mode->toBool() ? "True" : "False") + " fixed at save time (a module made by torch.jit.trace); "
                     "it would " + (mode->toBool() ? "evaluate with batch statistics" : "train without updating it") +
                     ". Save it with torch.jit.script(model) instead, which keeps the mode switchable");
  }
}

torch::jit::Module load_archive(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError("TorchScript model " + path + " does not exist (or is not a file); give --model "
                     "torchscript:FILE.pt with a file written by torch.jit.save");
  try {
    return torch::jit::load(path, c10::Device(c10::kCPU));
  } catch (const c10::Error& e) {
    throw InputError("TorchScript model " + path + " could not be loaded as a torch.jit.save archive (" +
                     first_line(e.what_without_backtrace()) + "); save it with torch.jit.save(torch.jit.script(model), path)");
  }
}

}  // namespace

bool is_torchscript_name(const std::string& name) { return name.rfind(kTorchScriptPrefix, 0) == 0; }

TorchScriptClassifierImpl::TorchScriptClassifierImpl(torch::jit::Module module, std::string path, bool optimize)
    : module_(std::move(module)), path_(std::move(path)), optimize_(optimize) {
  mirror_into(*this, module_);
  train(module_.is_training());
}

at::Tensor TorchScriptClassifierImpl::forward(at::Tensor x) {
  torch::jit::GraphOptimizerEnabledGuard optimize(optimize_);
  c10::IValue out = module_.forward({std::move(x)});
  if (!out.isTensor())
    throw InputError("TorchScript model " + path_ + ": forward returned " + out.tagKind() + ", expected a logits Tensor");
  return std::move(out).toTensor();
}

void TorchScriptClassifierImpl::train(bool on) {
  ClassifierImpl::train(on);
  module_.train(on);
}

void TorchScriptClassifierImpl::pretty_print(std::ostream& stream) const {
  stream << "TorchScriptClassifier(" << path_ << ")";
}

TorchScriptClassifier torchscript_load(const std::string& path) {
  return torchscript_load(path, torchscript_executor_default());
}

TorchScriptClassifier torchscript_load(const std::string& path, TorchScriptExecutor executor) {
  torchscript_executor_apply(executor);
  return torchscript_from_module(load_archive(path), path, executor);
}

TorchScriptClassifier torchscript_from_module(torch::jit::Module module, const std::string& path,
                                              TorchScriptExecutor executor) {
  torchscript_executor_apply(executor);
  check_signature(module, path);
  if (module.parameters().size() == 0)
    throw InputError("TorchScript model " + path + " has no parameters: nothing to train (a torch.jit.freeze'd "
                     "module keeps its weights as constants; save the unfrozen torch.jit.script module)");
  check_modes_not_frozen(module, path);
  return TorchScriptClassifier(std::move(module), path, executor == TorchScriptExecutor::kProfiling);
}

TorchScriptExecutor torchscript_executor_default() {
  const char* env = std::getenv("FASTLOOP_TORCHSCRIPT_EXECUTOR");
  const std::string choice = env ? env : "";
  if (choice.empty() || choice == "unoptimized") return TorchScriptExecutor::kUnoptimized;
  if (choice == "profiling") return TorchScriptExecutor::kProfiling;
  if (choice == "simple") return TorchScriptExecutor::kSimple;
  throw InputError("FASTLOOP_TORCHSCRIPT_EXECUTOR='" + choice + "' is not one of profiling, unoptimized, simple");
}

void torchscript_executor_apply(TorchScriptExecutor executor) {
  torch::jit::getExecutorMode() = executor != TorchScriptExecutor::kSimple;
  torch::jit::getProfilingMode() = true;  // the unoptimized plan is the profiling executor's no-opt one
}

const char* torchscript_executor_name(TorchScriptExecutor executor) {
  switch (executor) {
    case TorchScriptExecutor::kProfiling: return "profiling";
    case TorchScriptExecutor::kUnoptimized: return "unoptimized";
    case TorchScriptExecutor::kSimple: return "simple";
  }
  return "?";
}

} // namespace fastloop
