// `fastloop export` as a library call: a checkpoint's model written as safetensors weights, a TorchScript
// file (traced in C++) or an ONNX model, each carrying the model's ModelInfo (class names, image size,
// mean/std, layout), so it can be used without fastloop's model code (io/torchscript_export.h, io/onnx_export.h).
#pragma once

#include <cstdint>
#include <string>

namespace fastloop {

enum class ExportFormat { kSafetensors, kTorchScript, kOnnx };

/// `format` ("safetensors", "torchscript" or "onnx"), or when "" the one `out`'s extension names
/// (.pt/.pth/.torchscript, .onnx; anything else: safetensors). InputError for another name, or for a
/// format that contradicts one of those extensions (--format onnx --out m.pt).
ExportFormat export_format_resolve(const std::string& format, const std::string& out);

const char* export_format_name(ExportFormat format);

struct ExportRequest {
  std::string checkpoint;  // written by train
  std::string out;
  std::string format;      // see export_format_resolve
  bool fold_bn = false;    // BatchNorm folded into the conv before it (eval-mode outputs unchanged)
  bool ema = false;        // the EMA of the weights instead of the weights
  std::string python;      // onnx: the interpreter with torch and onnx ("" = python_interpreter()'s)
};

struct ExportSummary {
  ExportFormat format = ExportFormat::kSafetensors;
  std::string model;       // the architecture
  int64_t classes = 0;
  size_t tensors = 0;      // safetensors: tensors written
};

/// Reads the checkpoint, rebuilds its model and writes `out`. InputError for a corrupt checkpoint, an
/// unwritable `out`, or a format or --fold-bn the model cannot do, each naming the file and the reason.
ExportSummary export_run(const ExportRequest& request);

} // namespace fastloop
