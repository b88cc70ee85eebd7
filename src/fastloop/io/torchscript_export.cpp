// torchscript_trace(): the model's tree mirrored as script modules holding the same tensors, then LibTorch's
// tracer run with that mirror as `self` (so each tensor the forward reads becomes a GetAttr of it) and the
// graph made the mirror's forward method — what Python's torch.jit.trace does in _create_method_from_trace.
#include "fastloop/io/torchscript_export.h"

#include "fastloop/core/errors.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/torchscript.h"

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/nn/modules/conv.h>
#include <torch/torch.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>

namespace fastloop {
namespace {

/// "fastloop::ResNetImpl" → "ResNetImpl": the class name a mirror module gets (mangled where repeated).
std::string mirror_class_name(const torch::nn::Module& m) {
  std::string name = m.name();
  const auto colon = name.rfind(':');
  if (colon != std::string::npos) name = name.substr(colon + 1);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return name.empty() ? "Module" : name;
}

torch::jit::Module mirror_module(const torch::nn::Module& m, const std::shared_ptr<torch::jit::CompilationUnit>& cu) {
  torch::jit::Module out(c10::QualifiedName("__torch__.fastloop." + mirror_class_name(m)), cu, /*shouldMangle=*/true);
  // Module::train() and Python's ScriptModule read every module's `training`; trace() records none of it.
  if (!out.type()->hasAttribute("training")) out.register_attribute("training", c10::BoolType::get(), false);
  if (const auto* conv = dynamic_cast<const torch::nn::Conv2dImpl*>(&m)) {
    // The members, not the registered parameters: BatchNormFolding swaps the members for folded tensors.
    out.register_parameter("weight", conv->weight, /*is_buffer=*/false);
    if (conv->bias.defined()) out.register_parameter("bias", conv->bias, /*is_buffer=*/false);
  } else {
    for (const auto& p : m.named_parameters(/*recurse=*/false))
      if (p.value().defined()) out.register_parameter(p.key(), p.value(), /*is_buffer=*/false);
    for (const auto& b : m.named_buffers(/*recurse=*/false))
      if (b.value().defined()) out.register_buffer(b.key(), b.value());
  }
  for (const auto& child : m.named_children()) {
    const auto* bn = dynamic_cast<const FoldableBatchNorm2dImpl*>(child.value().get());
    if (bn && bn->folded_) continue;  // the identity now: its tensors are in the conv before it
    out.register_module(child.key(), mirror_module(*child.value(), cu));
  }
  return out;
}

void script_module_save(torch::jit::Module& module, const ModelInfo& info, const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    module.save(tmp, {{kModelInfoExtraFile, model_info_to_json(info)}});
  } catch (const c10::Error& e) {
    ::unlink(tmp.c_str());
    throw InputError("export: cannot write " + path + " (" + std::string(e.what_without_backtrace()).substr(0, 200) +
                     "); is its folder there and writable?");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw InputError("export: cannot write " + path + ": " + why);
  }
}

}  // namespace

torch::jit::Module torchscript_trace(ClassifierImpl& model, const at::Tensor& example) {
  TORCH_CHECK(!model.is_training(), "torchscript_trace: the model must be in eval mode");
  auto cu = std::make_shared<torch::jit::CompilationUnit>();
  torch::jit::Module module = mirror_module(model, cu);
  torch::NoGradGuard no_grad;
  auto traced = torch::jit::tracer::trace(
      {example},
      [&model](torch::jit::Stack inputs) -> torch::jit::Stack { return {model.forward(inputs.at(0).toTensor())}; },
      [](const at::Tensor&) { return std::string(); }, /*strict=*/true, /*force_outplace=*/false, &module, {"input"});
  auto fn = module._ivalue()->compilation_unit()->create_function(
      c10::QualifiedName(*module.type()->name(), "forward"), traced.first->graph);
  module.type()->addMethod(fn);
  module.eval();
  return module;
}

void torchscript_export(ClassifierImpl& model, const ModelInfo& info, const std::string& path, bool fold_bn) {
  model.eval();
  if (auto* script = dynamic_cast<TorchScriptClassifierImpl*>(&model)) {
    if (fold_bn) fold_bn_require(model);  // a compiled graph has no Conv2d/BatchNorm2d modules to fold
    script_module_save(script->script_module(), info, path);
    return;
  }
  std::optional<BatchNormFolding> folding;
  if (fold_bn) folding.emplace(model);
  const auto param = model.parameters();
  const auto options = param.empty() ? at::TensorOptions() : param.front().options().requires_grad(false);
  torch::jit::Module module = torchscript_trace(model, at::zeros({1, info.channels, info.height, info.width}, options));
  script_module_save(module, info, path);
}

} // namespace fastloop
