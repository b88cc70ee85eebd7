// TrainConfig's field table, TOML recipes (toml++), validation and JSON form (nlohmann-json).
#include "fastloop/core/config.h"

#include "fastloop/core/errors.h"

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

namespace fastloop {

std::vector<ConfigField> config_fields(TrainConfig& c) {
  return {
      {"data.source", "--data", "dataset: fashion-mnist[:DIR], mnist:DIR, cifar10:DIR, synthetic[:CxHxW]",
       &c.data.source, {}},
      {"data.batch_size", "--batch-size", "images per step", &c.data.batch_size, {}},
      {"data.workers", "--workers", "loader threads (0: load in the training thread)", &c.data.workers, {}},
      {"data.prefetch", "--prefetch", "batches prepared ahead of the step", &c.data.prefetch, {}},
      {"data.augment", "--augment", "random crop and flip on the train split", &c.data.augment, {}},
      {"data.crop_pad", "--crop-pad", "zero padding in pixels before the random crop", &c.data.crop_pad, {}},
      {"data.flip", "--flip", "random horizontal flip", &c.data.flip, {}},
      {"data.pin_memory", "--pin-memory", "CUDA: batches in pinned buffers, copied non_blocking on a side stream",
       &c.data.pin_memory, {}},
      {"data.on_device", "--data-on-device", "whole uint8 dataset on the device, augmented there, no workers",
       &c.data.on_device, {}},
      {"model.name", "--model", "architecture (fastloop models lists them)", &c.model.name, {}},
      {"model.stem", "--stem", "input stem: cifar (3x3, no max-pool) or imagenet", &c.model.stem,
       {"cifar", "imagenet"}},
      {"model.num_classes", "--num-classes", "classes (0: from the data)", &c.model.num_classes, {}},
      {"optim.name", "--optim", "optimizer", &c.optim.name, {"sgd", "adamw"}},
      {"optim.lr", "--lr", "peak learning rate", &c.optim.lr, {}},
      {"optim.momentum", "--momentum", "SGD momentum", &c.optim.momentum, {}},
      {"optim.nesterov", "--nesterov", "SGD Nesterov momentum", &c.optim.nesterov, {}},
      {"optim.weight_decay", "--weight-decay", "weight decay (SGD: L2; AdamW: decoupled)",
       &c.optim.weight_decay, {}},
      {"optim.label_smoothing", "--label-smoothing", "cross-entropy label smoothing in [0, 1)",
       &c.optim.label_smoothing, {}},
      {"schedule.name", "--schedule", "learning-rate schedule", &c.schedule.name,
       {"constant", "cosine", "onecycle", "step"}},
      {"schedule.warmup_epochs", "--warmup-epochs", "linear warm-up in epochs (cosine, step)",
       &c.schedule.warmup_epochs, {}},
      {"schedule.pct_start", "--pct-start", "onecycle: fraction of steps rising", &c.schedule.pct_start, {}},
      {"schedule.step_epochs", "--step-epochs", "step: epochs between decays", &c.schedule.step_epochs, {}},
      {"schedule.gamma", "--gamma", "step: decay factor", &c.schedule.gamma, {}},
      {"perf.mode", "--perf", "auto: turn on what pays on this hardware and print why; manual: the flags",
       &c.perf.mode, {"manual", "auto"}},
      {"perf.device", "--device", "where to train: auto (CUDA when visible), cpu, cuda", &c.perf.device,
       {"auto", "cpu", "cuda"}},
      {"perf.amp", "--amp", "mixed precision: autocast dtype (fp16 adds GradScaler)", &c.perf.amp,
       {"off", "fp16", "bf16"}},
      {"perf.channels_last", "--channels-last", "NHWC memory format for parameters and batches",
       &c.perf.channels_last, {}},
      {"perf.set_to_none", "--set-to-none", "free gradients after each step instead of zeroing them",
       &c.perf.set_to_none, {}},
      {"perf.accumulate", "--accumulate", "micro-batches per optimizer step (gradient accumulation)",
       &c.perf.accumulate, {}},
      {"perf.cudnn_benchmark", "--cudnn-benchmark", "let cuDNN time its algorithms (CUDA)", &c.perf.cudnn_benchmark, {}},
      {"perf.tf32", "--tf32", "TF32 matmuls and convolutions (CUDA, Ampere and newer)", &c.perf.tf32, {}},
      {"perf.fused_optim", "--fused-optim", "one fused kernel for the optimizer update of all parameters",
       &c.perf.fused_optim, {}},
      {"perf.fold_bn", "--fold-bn", "evaluate with BatchNorm folded into the preceding convolution",
       &c.perf.fold_bn, {}},
      {"perf.cuda_graph", "--cuda-graph", "CUDA: capture the training step after warm-up and replay it",
       &c.perf.cuda_graph, {}},
      {"perf.interop_threads", "--interop-threads", "inter-op threads (0: LibTorch's default)",
       &c.perf.interop_threads, {}},
      {"run.epochs", "--epochs", "passes over the train split", &c.run.epochs, {}},
      {"run.max_steps", "--max-steps", "stop after this many steps (0: no limit)", &c.run.max_steps, {}},
      {"run.seed", "--seed", "seed of weights, shuffling and augmentation", &c.run.seed, {}},
      {"run.threads", "--threads", "intra-op threads (0: the cores this process may use)", &c.run.threads, {}},
      {"run.log_every", "--log-every", "steps between metric lines", &c.run.log_every, {}},
      {"run.metrics", "--metrics", "append JSON lines to this file", &c.run.metrics, {}},
      {"run.nan_policy", "--nan-policy", "a non-finite loss without AMP: stop the run, or skip that step",
       &c.run.nan_policy, {"stop", "skip"}},
      {"run.max_skipped_steps", "--max-skipped-steps",
       "end the run after this many consecutive skipped steps (AMP inf/nan or --nan-policy skip; 0: never)",
       &c.run.max_skipped_steps, {}},
      {"run.checkpoint_dir", "--checkpoint-dir", "write checkpoints here", &c.run.checkpoint_dir, {}},
      {"run.checkpoint_every", "--checkpoint-every", "steps between checkpoints (0: each epoch end)",
       &c.run.checkpoint_every, {}},
      {"run.resume", "--resume", "continue from the last checkpoint in --checkpoint-dir", &c.run.resume, {}},
      {"run.init_from", "--init-from", "start from these safetensors weights (PyTorch state_dict names)",
       &c.run.init_from, {}},
      {"run.init_non_strict", "--init-non-strict", "with --init-from: load what matches, list the rest",
       &c.run.init_non_strict, {}},
      {"run.init_skip", "--init-skip", "with --init-from: regex of names to leave initialised (e.g. '^fc\\.')",
       &c.run.init_skip, {}},
  };
}

namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

const ConfigField& field_by_key(const std::vector<ConfigField>& fields, const std::string& key,
                                const std::string& where) {
  auto it = std::find_if(fields.begin(), fields.end(), [&](const ConfigField& f) { return f.key == key; });
  if (it == fields.end()) {
    std::vector<std::string> keys;
    for (const auto& f : fields) keys.push_back(f.key);
    throw InputError(where + ": unknown setting '" + key + "'; known settings: " + join(keys));
  }
  return *it;
}

void set_from_toml(const ConfigField& field, const toml::node& node, const std::string& where) {
  bool ok = std::visit(
      [&](auto* target) {
        using T = std::remove_pointer_t<decltype(target)>;
        if constexpr (std::is_same_v<T, double>) {
          if (auto v = node.value<double>()) return *target = *v, true;  // accepts integers too
        } else if (auto v = node.value_exact<T>()) {
          return *target = *v, true;
        }
        return false;
      },
      field.target);
  if (!ok) throw InputError(where + ": '" + field.key + "' has the wrong type; see " + field.flag + " in --help");
}

}  // namespace

void config_load_toml(TrainConfig& config, const std::string& path) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << path << ":" << e.source().begin.line << ":" << e.source().begin.column
        << ": not a valid TOML recipe: " << e.description();
    throw InputError(msg.str());
  }
  auto fields = config_fields(config);
  for (const auto& [section, node] : table) {
    const auto* inner = node.as_table();
    if (!inner)
      throw InputError(path + ": '" + std::string(section.str()) +
                       "' must be a [section] (data, model, optim, schedule, perf, run)");
    for (const auto& [name, value] : *inner) {
      std::string key = std::string(section.str()) + "." + std::string(name.str());
      set_from_toml(field_by_key(fields, key, path), value, path);
    }
  }
  // Closed sets are checked here too, so a recipe gets the same message as a flag.
  for (const auto& f : fields) {
    if (f.allowed.empty()) continue;
    const auto& v = *std::get<std::string*>(f.target);
    if (std::find(f.allowed.begin(), f.allowed.end(), v) == f.allowed.end())
      throw InputError(path + ": " + f.key + " = '" + v + "' is not one of: " + join(f.allowed));
  }
}

void config_validate(const TrainConfig& c) {
  auto require = [](bool ok, const std::string& flag, const std::string& what) {
    if (!ok) throw InputError(flag + ": " + what);
  };
  require(c.data.batch_size >= 1, "--batch-size", "must be >= 1");
  require(c.data.workers >= 0 && c.data.workers <= 256, "--workers", "must be in [0, 256]");
  require(c.data.prefetch >= 1 && c.data.prefetch <= 64, "--prefetch", "must be in [1, 64]");
  require(c.data.crop_pad >= 0 && c.data.crop_pad <= 64, "--crop-pad", "must be in [0, 64]");
  require(c.model.num_classes >= 0, "--num-classes", "must be >= 1 (or 0 to take it from the data)");
  require(c.optim.lr > 0, "--lr", "must be > 0");
  require(c.optim.momentum >= 0 && c.optim.momentum < 1, "--momentum", "must be in [0, 1)");
  require(c.optim.weight_decay >= 0, "--weight-decay", "must be >= 0");
  require(c.optim.label_smoothing >= 0 && c.optim.label_smoothing < 1, "--label-smoothing",
          "must be in [0, 1)");
  require(c.schedule.warmup_epochs >= 0, "--warmup-epochs", "must be >= 0");
  require(c.schedule.pct_start > 0 && c.schedule.pct_start < 1, "--pct-start", "must be in (0, 1)");
  require(c.schedule.step_epochs >= 1, "--step-epochs", "must be >= 1");
  require(c.schedule.gamma > 0 && c.schedule.gamma <= 1, "--gamma", "must be in (0, 1]");
  require(c.perf.accumulate >= 1 && c.perf.accumulate <= 4096, "--accumulate", "must be in [1, 4096]");
  require(c.perf.interop_threads >= 0, "--interop-threads", "must be >= 0 (0: LibTorch's default)");
  require(c.run.epochs >= 1, "--epochs", "must be >= 1");
  require(c.run.max_steps >= 0, "--max-steps", "must be >= 0 (0: no limit)");
  require(c.run.threads >= 0, "--threads", "must be >= 0 (0: all usable cores)");
  require(c.run.log_every >= 1, "--log-every", "must be >= 1");
  require(c.run.max_skipped_steps >= 0, "--max-skipped-steps", "must be >= 0");
  require(c.run.checkpoint_every >= 0, "--checkpoint-every", "must be >= 0");
  require(!c.run.resume || !c.run.checkpoint_dir.empty(), "--resume", "needs --checkpoint-dir");
  require(!c.run.init_from.empty() || (!c.run.init_non_strict && c.run.init_skip.empty()),
          c.run.init_non_strict ? "--init-non-strict" : "--init-skip", "needs --init-from");
}

std::string config_to_json(const TrainConfig& config) {
  auto copy = config;
  nlohmann::ordered_json out;
  for (const auto& f : config_fields(copy)) {
    std::visit([&](auto* target) { out[f.key] = *target; }, f.target);
  }
  return out.dump();
}

void config_from_json(TrainConfig& config, const std::string& json) {
  auto in = nlohmann::json::parse(json);
  for (const auto& f : config_fields(config)) {
    if (!in.contains(f.key)) continue;
    std::visit([&](auto* target) { *target = in.at(f.key).get<std::remove_pointer_t<decltype(target)>>(); },
               f.target);
  }
}

} // namespace fastloop
