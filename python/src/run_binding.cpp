// _C.train and _C.evaluate: `fastloop train` (train_run) and `fastloop eval` (eval_run) as calls that
// return their summary as a dict. A torch.jit.ScriptModule made in this process trains in place: it is
// registered as a model for the run, sharing its tensors (the TorchScript path, without a file).
#include "bindings.h"
#include "fork_safe.h"

#include "fastloop/fastloop.h"  // the public API only

#include <torch/csrc/jit/api/module.h>

#include <atomic>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fastloop::python {
namespace {

/// A model name for `module`, registered for this process. The run's model is `module` itself; any
/// further model of the run (the --ema-decay average) is a deep copy of it.
std::string script_module_register(torch::jit::Module module) {
  static std::atomic<int64_t> next_id{0};
  const std::string name = "python_script_module_" + std::to_string(next_id++);
  auto made = std::make_shared<std::atomic<int64_t>>(0);
  model_register(name, [module, made](const ModelOptions&) -> Classifier {
    torch::jit::Module instance = (*made)++ == 0 ? module : module.deepcopy();
    return torchscript_from_module(std::move(instance), "torch.jit.ScriptModule (fastloop.train's model)",
                                   torchscript_executor_default())
        .ptr();
  });
  return name;
}

py::dict train_call(const std::string& recipe, const std::vector<std::pair<std::string, py::object>>& fields,
                    const py::object& model, bool quiet) {
  TrainConfig config;
  if (!recipe.empty()) config_load_toml(config, recipe);
  std::set<std::string> given;  // as flags on a command line: --perf auto keeps them
  for (const auto& [key, value] : fields) given.insert(config_set(config, key, config_value_of(value, key)));
  if (!model.is_none()) {
    config.model.name = script_module_register(model.attr("_c").cast<torch::jit::Module>());
    given.insert("--model");
  }
  TrainSummary summary;
  {
    py::gil_scoped_release release;
    summary = fork_safe_run([&] { return train_run(config, given, quiet); });
  }
  py::dict out;
  out["test_accuracy"] = summary.test.accuracy;
  out["test_loss"] = summary.test.loss;
  out["test_samples"] = summary.test.samples;
  out["test_tta"] = summary.test.tta;
  out["img_per_s"] = summary.img_per_s;
  out["train_seconds"] = summary.train_seconds;
  out["elapsed_seconds"] = summary.elapsed_seconds;
  out["steps"] = summary.position.step;
  out["epochs"] = summary.position.epoch;
  out["skipped_steps"] = summary.skipped_steps;
  out["stopped"] = summary.stopped;
  out["checkpoint"] = config.run.checkpoint_dir.empty() ? py::object(py::none())
                                                         : py::object(py::str(checkpoint_path_in(config.run.checkpoint_dir)));
  out["config"] = config_to_json(config);
  out["loader_state"] = summary.loader_state;  // JSON: _run.py gives it as the dict Loader.state_dict() gives
  return out;
}

py::dict evaluate_call(const EvalRequest& request) {
  EvalRun run;
  {
    py::gil_scoped_release release;
    run = fork_safe_run([&] { return eval_run(request); });
  }
  py::dict out;
  out["accuracy"] = run.result.accuracy;
  out["loss"] = run.result.loss;
  out["samples"] = run.result.samples;
  out["seconds"] = run.result.seconds;
  out["tta"] = run.result.tta;
  out["model"] = run.model;
  out["data"] = run.data;
  out["classes"] = run.classes;
  return out;
}

std::string model_info_call(const std::string& checkpoint) {
  const Checkpoint saved = Checkpoint::read(checkpoint);
  if (saved.model_info_json().empty())
    throw InputError(checkpoint + " was written before checkpoints carried their class names and transform; "
                     "train it again (or resume it for one step) with this fastloop");
  return model_info_to_json(model_info_from_json(saved.model_info_json(), checkpoint));
}

/// The checkpoint's train loader state as JSON (train/loader_state.h), or "" for a file that has none.
std::string checkpoint_loader_state_call(const std::string& checkpoint) {
  return Checkpoint::read(checkpoint).loader_state_json();
}

}  // namespace

ConfigValue config_value_of(const py::handle& value, const std::string& key) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value) || PyIndex_Check(value.ptr())) return value.cast<int64_t>();  // numpy.int64
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  throw InputError("setting '" + key + "': " + std::string(py::str(py::type::of(value))) +
                   " is not a bool, int, float or str");
}

void run_bind(py::module_& module) {
  module.def("model_info", &model_info_call, py::arg("checkpoint"),
             "the checkpoint's ModelInfo as JSON: class names and evaluation transform");
  module.def("checkpoint_loader_state", &checkpoint_loader_state_call, py::arg("checkpoint"),
             "the checkpoint's train loader state as JSON (Loader.state_dict()'s fields), or \"\" for none");
  module.def("train", &train_call, py::arg("recipe"), py::arg("fields"), py::arg("model"), py::arg("quiet"),
             "`fastloop train`: a recipe (or none), then fields by key, then the run; returns its summary");
  module.def(
      "evaluate",
      [](const std::string& checkpoint, const std::string& data, int64_t batch_size, int64_t workers, bool fold_bn,
         const std::string& tta) {
        EvalRequest request;
        request.checkpoint = checkpoint;
        request.data = data;
        request.batch_size = batch_size;
        request.workers = workers;
        request.fold_bn = fold_bn;
        request.tta = tta;
        return evaluate_call(request);
      },
      py::arg("checkpoint"), py::arg("data"), py::arg("batch_size"), py::arg("workers"), py::arg("fold_bn"), py::arg("tta"),
      "`fastloop eval --checkpoint`: accuracy and loss on the test split");
}

} // namespace fastloop::python
