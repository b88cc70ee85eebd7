// inference_graph(): a classifier as LibTorch's optimized inference graph, what Python's
// `torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model.eval(), x)))` makes: the model
// traced in eval mode (BatchNorm already folded by the caller where it can be), frozen (its parameters
// become the graph's constants) and passed through torch::jit::optimize_for_inference, which on the CPU
// runs the convolutions as oneDNN ones on prepacked weights with the ReLU/ReLU6/add after them fused.
// Float32 only: under autocast the graph would drop the casts, so predict runs such a model eagerly.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/script.h>

#include <optional>
#include <string>

namespace fastloop {

/// The optimized graph of `model` (in eval mode) for inputs shaped and laid out like `example`, any batch
/// size; or nullopt with `why_not` set when LibTorch's tracer or one of its passes refuses the model.
std::optional<torch::jit::Module> inference_graph(ClassifierImpl& model, const at::Tensor& example, std::string& why_not);

/// The same for a loaded TorchScript module (an export of fastloop's or any scripted classifier); the
/// module itself is left as it was.
std::optional<torch::jit::Module> inference_graph(const torch::jit::Module& script, std::string& why_not);

} // namespace fastloop
