// A checkpoint records the train loader's state in fastloop.Loader.state_dict()'s form: a run stopped mid-epoch
// resumes at the next batch of that epoch; a file written before checkpoints carried it still resumes; a state
// that does not fit the run's data is one InputError naming what differs, and the checkpoint is left intact.
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/loader_state.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace fastloop;
namespace fs = std::filesystem;

namespace {

TrainConfig state_run(const std::string& dir) {
  TrainConfig config = test::tiny_config(192, 32);  // 6 batches an epoch
  config.data.workers = 2;
  config.run.epochs = 2;
  config.run.checkpoint_dir = dir;
  return config;
}

TrainControl stopping_at(int64_t step) {
  TrainControl control;
  control.progress = false;
  if (step > 0) control.should_stop = [step](const TrainPosition& p) { return p.step == step; };
  return control;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void expect_same_final_weights(const std::string& a_path, const std::string& b_path) {
  auto a = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  auto b = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  Checkpoint::read(a_path).restore(*a, nullptr, false);
  Checkpoint::read(b_path).restore(*b, nullptr, false);
  auto pb = b->named_parameters();
  for (const auto& item : a->named_parameters()) EXPECT_TRUE(torch::equal(item.value(), pb[item.key()])) << item.key();
}

}  // namespace

TEST(CheckpointLoaderState, AStopMidEpochRecordsTheLoadersStateDictAndResumesAtTheNextBatch) {
  const test::TempDir tmp;
  const auto straight_dir = tmp.sub("straight"), stopped_dir = tmp.sub("stopped");
  const TrainSummary straight = train(state_run(straight_dir), stopping_at(0));
  ASSERT_TRUE(train(state_run(stopped_dir), stopping_at(8)).stopped);  // batch 2 of the second epoch

  const auto state = nlohmann::json::parse(Checkpoint::read(checkpoint_path_in(stopped_dir)).loader_state_json());
  const nlohmann::json want = {{"version", 1},    {"epoch", 1},         {"position", 2 * 32},
                               {"order_world_size", 1}, {"world_size", 1}, {"source", "synthetic:1x12x12:192"},
                               {"split", "train"}, {"samples", 192},     {"num_classes", 10},
                               {"seed", 0},       {"batch_size", 32},   {"shuffle", true},
                               {"drop_last", true}, {"shuffle_buffer", 2048}};
  EXPECT_EQ(state, want);

  TrainConfig again = state_run(stopped_dir);
  again.run.resume = "on";
  const TrainSummary resumed = train(again, stopping_at(0));
  EXPECT_EQ(resumed.position.step, straight.position.step);
  expect_same_final_weights(checkpoint_path_in(straight_dir), checkpoint_path_in(stopped_dir));
  // Where the run ended: the start of the epoch after the last, as the summary reports it too.
  const auto end = nlohmann::json::parse(resumed.loader_state);
  EXPECT_EQ(end["epoch"], 2);
  EXPECT_EQ(end["position"], 0);
  EXPECT_EQ(nlohmann::json::parse(Checkpoint::read(checkpoint_path_in(stopped_dir)).loader_state_json()), end);
}

TEST(CheckpointLoaderState, AFileWithoutALoaderStateResumesAtItsBatch) {
  const test::TempDir tmp;
  const auto straight_dir = tmp.sub("straight"), old_dir = tmp.sub("old");
  train(state_run(straight_dir), stopping_at(0));
  ASSERT_TRUE(train(state_run(old_dir), stopping_at(3)).stopped);  // mid-epoch
  {  // rewritten as checkpoints were before they carried the loader's state
    TrainConfig config = state_run(old_dir);
    config.run.resume = "on";
    const DatasetSplits data = data_load(config.data);
    TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
    const auto path = checkpoint_path_in(old_dir);
    const std::string config_json = Checkpoint::read(path).config_json();
    checkpoint_save(path, *setup.model, setup.optimizer.get(), setup.position, config_json, &setup.scaler);
    ASSERT_EQ(Checkpoint::read(path).loader_state_json(), "");
  }
  TrainConfig again = state_run(old_dir);
  again.run.resume = "on";
  EXPECT_EQ(train(again, stopping_at(0)).position.step, 12);
  expect_same_final_weights(checkpoint_path_in(straight_dir), checkpoint_path_in(old_dir));
}

TEST(CheckpointLoaderState, AStateOfOtherDataIsOneErrorNamingWhatDiffersAndTheCheckpointIsKept) {
  const test::TempDir tmp;
  const auto dir = tmp.sub("run");
  ASSERT_TRUE(train(state_run(dir), stopping_at(3)).stopped);
  const auto path = checkpoint_path_in(dir);
  const std::string before = file_bytes(path);

  TrainConfig other = state_run(dir);
  other.run.resume = "on";
  other.run.seed = 5;
  other.data.batch_size = 16;
  try {
    train(other, stopping_at(0));
    FAIL() << "resumed a checkpoint of other data";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path + ": its loader state does not fit this run's data"), std::string::npos) << message;
    EXPECT_NE(message.find("seed is 0 in the checkpoint, 5 here"), std::string::npos) << message;
    EXPECT_NE(message.find("batch_size is 32 in the checkpoint, 16 here"), std::string::npos) << message;
    EXPECT_EQ(message.find("samples is"), std::string::npos) << "only what differs: " << message;
    EXPECT_NE(message.find("another --checkpoint-dir"), std::string::npos) << message;
  }
  EXPECT_EQ(file_bytes(path), before) << "the checkpoint is left as it was";
}

TEST(CheckpointLoaderState, AMalformedStateIsAnInputErrorNamingTheField) {
  LoaderState state;
  state.position = {32, 2};
  state.identity.source = "synthetic:1x12x12:64";
  const std::string json = loader_state_to_json(state);
  EXPECT_EQ(loader_state_to_json(loader_state_from_json(json, "x.ckpt")), json);
  auto broken = nlohmann::json::parse(json);
  broken.erase("seed");
  try {
    loader_state_from_json(broken.dump(), "x.ckpt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.ckpt: the loader state has no \"seed\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(loader_state_from_json("{\"version\": 2}", "x.ckpt"), InputError);
  EXPECT_THROW(loader_state_from_json("not json", "x.ckpt"), InputError);
}
