// `fastloop eval` as a library call: the model of a checkpoint (or safetensors weights and a model name)
// evaluated on a test split. The executable's `eval` and fastloop.evaluate() in Python both call it.
#pragma once

#include "fastloop/core/config.h"
#include "fastloop/models/model_info.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fastloop {

struct EvalRequest {
  std::string checkpoint;  // a checkpoint written by train; or else:
  std::string init_from;   // safetensors weights (PyTorch state_dict names), with model, stem, classes below
  std::string model;
  std::string stem = "cifar";
  int64_t num_classes = 0;  // 0: the data's
  std::string data;         // empty: the data the checkpoint was trained on
  int64_t batch_size = 0;   // 0: the checkpoint's
  ImageSettings image{0, "", ""};  // each empty (0): the checkpoint's (224 and the data's own with --init-from)
  int64_t workers = 1;
  int64_t threads = 0;      // intra-op threads; 0: every usable core
  bool fold_bn = false;
  std::string tta;          // test-time augmentation (off | flip | flip-translate); empty: the checkpoint's
};

struct EvalRun {
  EvalResult result;
  std::string model;        // the checkpoint or weights file evaluated
  std::string data;         // the --data source it was evaluated on
  std::vector<std::string> classes;  // the checkpoint's class names (the split's for weights or older files)
};

/// The class names and evaluation transform of `checkpoint` (read from `path`, with `config` its run's): as
/// stored, or for a file written before checkpoints carried them, derived from the run's data.
ModelInfo checkpoint_model_info(const Checkpoint& checkpoint, const TrainConfig& config, const std::string& path);

/// Per class, its name and the share of its samples classified right (NaN: none in the split).
std::vector<std::pair<std::string, double>> eval_per_class(const EvalRun& run);

/// accuracy, loss, samples, model, data, classes, per_class_accuracy and the confusion matrix (rows: true
/// class, columns: predicted) as a JSON object: `fastloop eval --out FILE.json`.
std::string eval_run_json(const EvalRun& run);

/// Loads the model and the test split `request` names and evaluates it. A missing or damaged file, a
/// request without a model, or weights that do not fit the model throw InputError naming them.
EvalRun eval_run(const EvalRequest& request);

} // namespace fastloop
