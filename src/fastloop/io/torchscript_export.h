// `fastloop export --format torchscript`: a C++ model traced in evaluation mode into a torch::jit::Module
// whose parameters and buffers are attributes (prim::GetAttr in the graph, not baked constants), saved with
// its ModelInfo as an extra file, so torch.jit.load in Python and torch::jit::load in C++ run it without fastloop.
#pragma once

#include "fastloop/models/classifier.h"
#include "fastloop/models/model_info.h"

#include <ATen/core/Tensor.h>
#include <torch/csrc/jit/api/module.h>

#include <string>

namespace fastloop {

/// Traces `model.forward(example)` into a new script module. The module mirrors the model's tree
/// (one submodule per child, same names as named_parameters()), holding the SAME tensors the forward
/// reads: a Conv2d's current weight and bias members (the folded ones while a BatchNormFolding lives),
/// and no entry for a folded BatchNorm. The model must be in eval mode; the graph records every op it ran
/// on `example` (sizes read as C++ integers are constants, so fastloop's models keep the batch dimension
/// free: they flatten with flatten(1)).
torch::jit::Module torchscript_trace(ClassifierImpl& model, const at::Tensor& example);

/// Writes `model` (eval mode is set; a TorchScript-loaded model is saved as its own script module) to
/// `path` with `info` as the extra file kModelInfoExtraFile, atomically. With `fold_bn` each BatchNorm is
/// folded into its conv first (fold_bn_require: a model that cannot be folded is an InputError). The
/// example input is one zero image of info's shape. Throws InputError when `path` cannot be written.
void torchscript_export(ClassifierImpl& model, const ModelInfo& info, const std::string& path, bool fold_bn);

} // namespace fastloop
