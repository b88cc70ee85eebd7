// `fastloop export --format onnx`: the TorchScript export (io/torchscript_export.h) converted by the Python
// torch's torch.onnx (its TorchScript-based exporter: the torch.export route takes no ScriptModule) in a
// child python, with the ModelInfo in the ONNX file's metadata_props (python/fastloop/_onnx_export.py, embedded).
#pragma once

#include <cstdint>
#include <string>

namespace fastloop {

struct OnnxExportOptions {
  std::string python;  // an interpreter with torch and onnx; "" = python_interpreter()'s
  int64_t opset = 17;  // ONNX Runtime >= 1.12 runs it; 17 is the newest the legacy exporter knows well
};

/// Converts `torchscript_path` (a fastloop TorchScript export, with its ModelInfo extra file) into the
/// ONNX file `path` (input "input" [batch, C, H, W], output "logits" [batch, classes], batch dynamic),
/// atomically. Throws InputError with the converter's reason when the python lacks torch or onnx, the
/// model has an op torch.onnx cannot convert, or `path` cannot be written.
void onnx_from_torchscript(const std::string& torchscript_path, const std::string& path, const OnnxExportOptions& options);

} // namespace fastloop
