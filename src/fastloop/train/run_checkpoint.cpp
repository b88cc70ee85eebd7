// A run's checkpoints: what the trainer saves, when, and the train loader's place it records.
#include "fastloop/train/run_checkpoint.h"

#include "fastloop/core/errors.h"
#include "fastloop/train/checkpoint.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace fastloop {

namespace {
/// The config a checkpoint records: the run's, with the ranks that ran it.
std::string config_json_of(const TrainSetup& setup) {
  TrainConfig saved = setup.config;
  saved.dist.world_size = setup.world_size();
  return config_to_json(saved);
}
}  // namespace

RunCheckpoint::RunCheckpoint(const TrainSetup& setup, const Loader& loader)
    : setup_(setup),
      loader_(loader),
      config_json_(config_json_of(setup)),
      best_(setup.config.run.checkpoint_dir, setup.main_rank() ? setup.config.run.keep_best : 0, setup.resumed) {
  if (setup.resumed) last_ = {setup.checkpoint, setup.position.step};
  if (setup.checkpoint.empty() || !setup.main_rank() || setup.resumed) return;
  std::error_code error;  // made now, not found missing at the first save
  std::filesystem::create_directories(setup.config.run.checkpoint_dir, error);
  if (error)
    throw InputError("--checkpoint-dir " + setup.config.run.checkpoint_dir + ": cannot create it: " + error.message() +
                     "; give a writable folder");
}

void RunCheckpoint::step_done() {
  const int64_t every = setup_.config.run.checkpoint_every;
  if (every > 0 && setup_.position.step % every == 0) save();
}

void RunCheckpoint::save() {
  if (setup_.checkpoint.empty() || !setup_.main_rank()) return;
  save_to(setup_.checkpoint);
  last_ = {setup_.checkpoint, setup_.position.step};
}

void RunCheckpoint::offer_best(double accuracy) {
  best_.offer(accuracy, setup_.position.epoch, [this](const std::string& path) { save_to(path); });
}

LoaderState RunCheckpoint::loader_state() const {
  const TrainPosition& p = setup_.position;
  const int64_t world = setup_.world_size();
  EpochPosition at{0, world};
  if (setup_.loader_start.order_world_size != 0) at = setup_.loader_start;
  else if (p.batch > 0 && setup_.config.data.on_device)  // the device-resident loader keeps no position
    at = {p.batch * setup_.train_loader.batch_size * world, world};
  else if (p.batch > 0) at = loader_.position();
  return {p.epoch, at, world, setup_.loader_identity};
}

void RunCheckpoint::record_budget(const std::string& budget_json) {
  auto json = nlohmann::ordered_json::parse(config_json_of(setup_));
  json["budget"] = nlohmann::ordered_json::parse(budget_json);
  config_json_ = json.dump();
}

void RunCheckpoint::save_to(const std::string& path) const {
  checkpoint_save(path, *setup_.model, setup_.optimizer.get(), setup_.position, config_json_, &setup_.scaler,
                  setup_.ema ? &setup_.ema->module() : nullptr, model_info_to_json(setup_.info),
                  setup_.lookahead.get(), loader_state_to_json(loader_state()));
}

} // namespace fastloop
