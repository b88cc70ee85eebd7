// `--model torchscript:FILE.pt`: a module scripted in Python (torch.jit.script + torch.jit.save) as a
// Classifier. The wrapper mirrors the script module's tree as torch::nn::Modules holding the SAME tensors
// (no copies), so everything fastloop does through torch::nn::Module — parameters() for the optimizer and
// DDP, named_parameters()/named_buffers() for checkpoints and export (the module's own state_dict names),
// to(device), channels_last via set_data, train()/eval() — reaches the scripted graph unchanged.
#pragma once

#include "fastloop/models/classifier.h"

#include <torch/csrc/jit/api/module.h>

#include <string>

namespace fastloop {

/// The model-name prefix that selects a TorchScript file: "torchscript:path/to/model.pt".
inline constexpr const char* kTorchScriptPrefix = "torchscript:";

/// True for "torchscript:..." names.
bool is_torchscript_name(const std::string& name);

class TorchScriptClassifierImpl : public ClassifierImpl {
 public:
  /// `optimize`: the graph executor's optimisation for this module's forward calls (a thread-local
  /// LibTorch setting, so it is set around each call, on whatever thread the loop runs).
  TorchScriptClassifierImpl(torch::jit::Module module, std::string path, bool optimize);

  /// The script module's forward on one image batch; its result must be a Tensor (checked once by the
  /// probe in model_check_forward, and here on every call since a script may branch on its input).
  at::Tensor forward(at::Tensor x) override;

  /// Sets the mode of the mirrored tree and of the script module (its BatchNorm/Dropout read `training`).
  void train(bool on = true) override;

  void pretty_print(std::ostream& stream) const override;

  const std::string& path() const { return path_; }
  torch::jit::Module& script_module() { return module_; }

 private:
  torch::jit::Module module_;
  std::string path_;
  bool optimize_;
};
TORCH_MODULE(TorchScriptClassifier);

/// The graph executor TorchScript runs forward with.
enum class TorchScriptExecutor {
  kProfiling,   // LibTorch's default: profile the first run(s), then specialise on shapes with guards
  kUnoptimized, // setGraphExecutorOptimize(false): the graph's ops run one by one, eager autograd
  kSimple,      // getExecutorMode() = false: the simple executor, no profiling or specialisation
};

/// Loads `path` (a torch.jit.save archive) on the CPU and checks what can be checked without running it:
/// the file exists and is a TorchScript archive, forward takes one Tensor and returns a Tensor, the module
/// has parameters, and no BatchNorm/Dropout has its training flag frozen to a constant (what
/// torch.jit.trace records: such a module would train or evaluate in the wrong mode). Each problem is an
/// InputError naming the file and what was expected. Runs forward with `executor`.
TorchScriptClassifier torchscript_load(const std::string& path, TorchScriptExecutor executor);
TorchScriptClassifier torchscript_load(const std::string& path);  // torchscript_executor_default()

/// The checks of torchscript_load() on a module already in memory (one made by torch.jit.script in the same
/// Python process); `path` names it in messages. The classifier shares the module's tensors: training it
/// trains `module`.
TorchScriptClassifier torchscript_from_module(torch::jit::Module module, const std::string& path,
                                              TorchScriptExecutor executor);

/// fastloop's choice (measured, see README "Your own model"), unless FASTLOOP_TORCHSCRIPT_EXECUTOR is
/// "profiling", "unoptimized" or "simple". An unknown value is an InputError.
TorchScriptExecutor torchscript_executor_default();

/// Sets LibTorch's process-wide executor mode for `executor` (simple or not, profiling or not); takes
/// effect for script functions run for the first time after it.
void torchscript_executor_apply(TorchScriptExecutor executor);

/// "profiling", "unoptimized" or "simple".
const char* torchscript_executor_name(TorchScriptExecutor executor);

} // namespace fastloop
