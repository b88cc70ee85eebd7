// export_run(): the checkpoint's model and ModelInfo, then one writer per format; ONNX goes through a
// TorchScript file written next to `out` (so an unwritable folder fails before python starts).
#include "fastloop/run/export_run.h"

#include "fastloop/run/eval_run.h"
#include "fastloop/core/errors.h"
#include "fastloop/io/onnx_export.h"
#include "fastloop/io/torchscript_export.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/model_info.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/version.h"

#include <unistd.h>

#include <filesystem>

namespace fastloop {
namespace {

struct ExportModel {
  Classifier model;
  ModelInfo info;
  std::string config_json;
};

ExportModel export_model_load(const ExportRequest& r) {
  auto checkpoint = Checkpoint::read(r.checkpoint);
  TrainConfig config;
  config_from_json(config, checkpoint.config_json());
  ExportModel m;
  m.config_json = checkpoint.config_json();
  m.info = checkpoint_model_info(checkpoint, config, r.checkpoint);
  m.model = model_make_for(config.model, m.info.channels, static_cast<int64_t>(m.info.classes.size()));
  checkpoint.restore(*m.model, nullptr, /*rng=*/false);
  if (r.ema) checkpoint.restore_ema(*m.model);
  m.model->eval();
  return m;
}

std::string extension_of(const std::string& path) { return std::filesystem::path(path).extension().string(); }

}  // namespace

ExportFormat export_format_resolve(const std::string& format, const std::string& out) {
  const std::string ext = extension_of(out);
  const bool pt = ext == ".pt" || ext == ".pth" || ext == ".torchscript";
  if (format.empty()) return pt ? ExportFormat::kTorchScript : ext == ".onnx" ? ExportFormat::kOnnx : ExportFormat::kSafetensors;
  ExportFormat f;
  if (format == "safetensors") f = ExportFormat::kSafetensors;
  else if (format == "torchscript") f = ExportFormat::kTorchScript;
  else if (format == "onnx") f = ExportFormat::kOnnx;
  else throw InputError("--format " + format + ": expected safetensors, torchscript or onnx");
  const bool contradicts = (pt && f != ExportFormat::kTorchScript) || (ext == ".onnx" && f != ExportFormat::kOnnx) ||
                           (ext == ".safetensors" && f != ExportFormat::kSafetensors);
  if (contradicts)
    throw InputError("--format " + format + " with --out " + out + ": the extension " + ext +
                     " names another format; change one of them");
  return f;
}

const char* export_format_name(ExportFormat format) {
  switch (format) {
    case ExportFormat::kSafetensors: return "safetensors";
    case ExportFormat::kTorchScript: return "torchscript";
    case ExportFormat::kOnnx: return "onnx";
  }
  return "?";
}

ExportSummary export_run(const ExportRequest& r) {
  ExportSummary summary;
  summary.format = export_format_resolve(r.format, r.out);
  ExportModel m = export_model_load(r);
  summary.model = m.info.model;
  summary.classes = static_cast<int64_t>(m.info.classes.size());
  const std::string info_json = model_info_to_json(m.info);
  switch (summary.format) {
    case ExportFormat::kSafetensors: {
      const NamedTensors tensors = model_state_export(*m.model, r.fold_bn);
      safetensors_write(r.out, tensors,
                        {{"format", "pt"}, {"fastloop_version", FASTLOOP_VERSION}, {"fastloop_config", m.config_json},
                         {"fastloop_fold_bn", r.fold_bn ? "true" : "false"}, {"fastloop_ema", r.ema ? "true" : "false"},
                         {kModelInfoMetadataKey, info_json}});
      summary.tensors = tensors.size();
      break;
    }
    case ExportFormat::kTorchScript: torchscript_export(*m.model, m.info, r.out, r.fold_bn); break;
    case ExportFormat::kOnnx: {
      const std::string script = r.out + ".torchscript.tmp." + std::to_string(::getpid());
      torchscript_export(*m.model, m.info, script, r.fold_bn);
      try {
        onnx_from_torchscript(script, r.out, {r.python});
      } catch (...) {
        std::filesystem::remove(script);
        throw;
      }
      std::filesystem::remove(script);
      break;
    }
  }
  return summary;
}

} // namespace fastloop
