// Checkpoints: model, optimizer, position in the run, RNG state and the resolved config in one file.
// Written to a temporary file, flushed, fsync'ed and renamed, so the last good checkpoint is never
// damaged; a header with the payload size and CRC-32 makes a truncated or corrupt file a clear error.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>

#include <cstdint>
#include <string>

namespace fastloop {

/// Where a run is: the next batch to run is `batch` of `epoch`; `step` optimizer steps are done.
struct TrainPosition {
  int64_t epoch = 0;
  int64_t batch = 0;
  int64_t step = 0;
};

class GradScaler;
class Lookahead;

/// The checkpoint file a run writes in `dir` (--checkpoint-dir) and --resume reads.
std::string checkpoint_path_in(const std::string& dir);

/// `model_info_json`: models/model_info.h's JSON (class names, evaluation transform); "" writes none.
/// `ema`: the weights' moving average (--ema-decay), kept as a second model archive ("ema").
/// `lookahead`: --lookahead-steps' slow weights and count ("lookahead"), so a resume continues bitwise.
/// `loader_state_json`: the train loader's place (train/loader_state.h) as fastloop.Loader.state_dict()
/// gives it ("loader_state"); "" writes none.
void checkpoint_save(const std::string& path, const torch::nn::Module& model, const torch::optim::Optimizer* optimizer,
                     const TrainPosition& position, const std::string& config_json,
                     const GradScaler* scaler = nullptr, const torch::nn::Module* ema = nullptr,
                     const std::string& model_info_json = "", const Lookahead* lookahead = nullptr,
                     const std::string& loader_state_json = "");

/// A checkpoint read and verified, ready to restore into a model built from its config.
class Checkpoint {
 public:
  /// Reads and verifies `path`; throws InputError naming the file and what is wrong.
  static Checkpoint read(const std::string& path);

  const std::string& config_json() const { return config_json_; }
  const TrainPosition& position() const { return position_; }
  /// models/model_info.h's JSON, or "" for a file written before checkpoints carried it.
  const std::string& model_info_json() const { return model_info_json_; }
  /// The train loader's state as JSON (train/loader_state.h), or "" for a file written before checkpoints
  /// carried it (its position is then `position().batch` of the ranks in its config).
  const std::string& loader_state_json() const { return loader_state_json_; }

  /// Loads weights, and the optimizer, CPU RNG and GradScaler states when asked, from the checkpoint.
  void restore(torch::nn::Module& model, torch::optim::Optimizer* optimizer, bool rng = true,
               GradScaler* scaler = nullptr);

  /// Whether the run kept an EMA of its weights (--ema-decay).
  bool has_ema();
  /// Loads the EMA weights into `module` (a model of the checkpoint's architecture); throws InputError
  /// naming the file when it has none.
  void restore_ema(torch::nn::Module& module);

  /// Loads --lookahead-steps' slow weights and count into `lookahead`; false (and `lookahead` untouched)
  /// when the run that wrote it had no Lookahead. Throws InputError naming the file when they do not match.
  bool restore_lookahead(Lookahead& lookahead);

 private:
  std::string path_;
  torch::serialize::InputArchive archive_;
  std::string config_json_;
  std::string model_info_json_;
  std::string loader_state_json_;
  TrainPosition position_;
};

} // namespace fastloop
