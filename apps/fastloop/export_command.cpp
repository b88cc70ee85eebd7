// `fastloop export --checkpoint FILE --out FILE [--format safetensors|torchscript|onnx] [--fold-bn] [--ema]`:
// a checkpoint's model as safetensors weights (PyTorch state_dict names), a TorchScript file traced in C++,
// or an ONNX model, each with its class names and evaluation transform (run/export_run.h).
#include "commands.h"

#include "fastloop/run/export_run.h"

#include <cstdio>
#include <memory>

namespace fastloop {

Subcommand export_command(CLI::App& root) {
  auto* app = root.add_subcommand(
      "export", "Write a checkpoint's model as safetensors weights, a TorchScript file or an ONNX model");
  auto r = std::make_shared<ExportRequest>();
  app->add_option("--checkpoint", r->checkpoint, "checkpoint file written by train")->required();
  app->add_option("--out", r->out, "file to write (replaced atomically)")->required();
  app->add_option("--format", r->format,
                  "safetensors (weights, state_dict names), torchscript (torch.jit.load / torch::jit::load) or "
                  "onnx (ONNX Runtime; converted by the python in $FASTLOOP_PYTHON or ./.venv/bin/python); "
                  "default: by --out's extension (.pt/.pth, .onnx, else safetensors)");
  app->add_flag("--fold-bn", r->fold_bn,
                "fold each BatchNorm into the conv before it (eval-mode outputs unchanged): safetensors then fit "
                "the same network with bias=True convs and no BatchNorm; TorchScript and ONNX run without them");
  app->add_flag("--ema", r->ema, "the EMA of the weights (runs trained with --ema-decay) instead of the weights");
  app->add_option("--python", r->python, "onnx: the interpreter with torch and onnx that converts the model");
  return {app, [r] {
            const ExportSummary s = export_run(*r);
            std::printf("wrote %s (%s, %s, %lld classes%s) to %s\n", export_format_name(s.format),
                        s.format == ExportFormat::kSafetensors ? (std::to_string(s.tensors) + " tensors").c_str() : "model",
                        s.model.c_str(), static_cast<long long>(s.classes), r->fold_bn ? ", BatchNorm folded" : "",
                        r->out.c_str());
            return 0;
          }};
}

} // namespace fastloop
