// Model weights in and out as named tensors with PyTorch state_dict names (io/safetensors_tensors.h): export (optionally with BatchNorm folded into convs) and strict/non-strict loading.
#pragma once

#include "fastloop/io/safetensors_tensors.h"

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// The model's parameters then buffers, with named_parameters()/named_buffers() names (equal to the
/// reference PyTorch model's state_dict keys), detached copies on the CPU.
/// With fold_bn, each BatchNorm2d is folded into the Conv2d registered just before it (same channel
/// count): weight x gamma/sqrt(running_var + eps) per output channel and a bias
/// beta - running_mean x gamma/sqrt(running_var + eps) (+ the conv's own bias, scaled) are written,
/// and the BatchNorm's five entries are dropped. The result is the state_dict of the same network
/// with bias=True convs and BatchNorm replaced by identity, equal to the original in eval mode.
NamedTensors model_state_export(const torch::nn::Module& model, bool fold_bn = false);

/// What model_state_load did not load, each entry a readable line.
struct StateLoadReport {
  std::vector<std::string> missing;     // model names absent from the file
  std::vector<std::string> unexpected;  // file names the model does not have
  std::vector<std::string> mismatched;  // "name: file [a, b] vs model [c, d]"
  std::vector<std::string> skipped;     // names matched by the skip pattern, left as initialised
  size_t loaded = 0;
  bool complete() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
};

/// Copies `tensors` into the model's parameters and buffers by name (values converted to each target's
/// dtype and device, as PyTorch's load_state_dict does). Names matching `skip_pattern` (an ECMAScript
/// regex searched anywhere in the name, e.g. "^fc\." for a new ResNet head; empty: none) are ignored on
/// both sides. strict: any missing, unexpected or mis-shaped name is one InputError listing them all,
/// and the model is left unchanged. Not strict: loads what matches and reports the rest.
StateLoadReport model_state_load(torch::nn::Module& model, const NamedTensors& tensors, bool strict = true,
                                 const std::string& skip_pattern = "");

/// Reads `path` (safetensors) and model_state_load()s it; errors name the file.
StateLoadReport model_state_load_file(torch::nn::Module& model, const std::string& path, bool strict = true,
                                      const std::string& skip_pattern = "");

/// One line per problem of a report, for logs ("missing: a, b; unexpected: c").
std::string state_load_summary(const StateLoadReport& report);

} // namespace fastloop
