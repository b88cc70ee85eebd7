// safetensors files as at::Tensors (ATen only: the data pipeline's tensor arguments read them too, without
// the model layer of io/weights.h).
#pragma once

#include "fastloop/io/safetensors.h"

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace fastloop {

/// Tensors in state_dict order, named as in PyTorch ("layer1.0.conv1.weight", "bn1.running_mean", ...).
using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// Writes `tensors` (any device, layout or memory format; stored contiguous) atomically as safetensors.
/// Throws InputError for a dtype safetensors cannot hold (complex, quantized, ...).
void safetensors_write(const std::string& path, const NamedTensors& tensors, const SafetensorsMetadata& metadata);

/// Copies every tensor of a parsed file into a CPU at::Tensor of its dtype and shape, in file order.
NamedTensors safetensors_tensors(const SafetensorsFile& file);

} // namespace fastloop
