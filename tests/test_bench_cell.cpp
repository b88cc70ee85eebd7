// The proof that the benchmark times the trainer: a bench cell built by bench_cell_plan() and trained for
// K optimizer steps ends with the parameters and buffers `fastloop train` has after the same K steps with
// the same flags — bitwise on the CPU — for the baseline, accumulate and amp rows.
#include "fastloop/bench/cell_timer.h"
#include "fastloop/bench/rows.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/trainer.h"

#include "test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

namespace fastloop {
namespace {

struct State {
  std::vector<std::pair<std::string, at::Tensor>> tensors;  // parameters, then buffers, by name
};

State state_of(const torch::nn::Module& model) {
  State state;
  for (const auto& item : model.named_parameters()) state.tensors.emplace_back(item.key(), item.value().detach().clone());
  for (const auto& item : model.named_buffers()) state.tensors.emplace_back(item.key(), item.value().detach().clone());
  return state;
}

TEST(BenchCell, TrainsTheParametersTrainDoesBitwise) {
  const test::TempDir tmp;
  BenchOptions options;
  options.data = "synthetic:3x16x16:64";
  options.device = "cpu";  // bitwise equality is a CPU property
  options.batch_size = 4;
  options.steps = 2;
  options.eval_steps = 1;
  options.warmup = 1;
  options.repeat = 2;
  const int64_t steps = options.warmup + options.steps * options.repeat;  // optimizer steps the cell trains
  const DatasetSplits data = data_load(options.data);
  // Every row on small_cnn (conv, BatchNorm, linear); ResNet-18's residual blocks on the baseline row (its
  // bf16 row alone took ~100 s on a CPU without native bf16, and adds no code path small_cnn's does not).
  const std::vector<std::pair<std::string, std::string>> cells = {
      {"small_cnn", "baseline"}, {"small_cnn", "accumulate"}, {"small_cnn", "amp"}, {"resnet18", "baseline"}};
  for (const auto& [model, row] : cells) {
    SCOPED_TRACE(model + " " + row);
    std::optional<std::string> na;
    CellPlan plan = bench_cell_plan(options, model, row, c10::kCPU, /*threads=*/1, /*nproc=*/1, data, na);
    ASSERT_FALSE(na) << *na;
    State bench;
    plan.on_trained = [&bench](ClassifierImpl& trained) { bench = state_of(trained); };
    cell_run(plan, data);

    TrainConfig config = plan.config;  // the flags the cell ran with, as `fastloop train` takes them
    config.run.max_steps = steps;
    config.run.epochs = 10;
    config.run.checkpoint_dir = tmp.sub("bench_cell_" + model + "_" + row);
    TrainControl quiet;
    quiet.progress = false;
    ASSERT_EQ(train(config, quiet).position.step, steps);
    auto trained = model_make_for(config.model, data.train.channels(), data.train.num_classes);
    Checkpoint::read(checkpoint_path_in(config.run.checkpoint_dir)).restore(*trained, nullptr, false);
    if (config.perf.channels_last) module_to_channels_last(*trained);
    const State reference = state_of(*trained);

    ASSERT_EQ(bench.tensors.size(), reference.tensors.size());
    ASSERT_GT(bench.tensors.size(), 0u);
    for (size_t i = 0; i < bench.tensors.size(); ++i) {
      EXPECT_EQ(bench.tensors[i].first, reference.tensors[i].first);
      EXPECT_TRUE(torch::equal(bench.tensors[i].second, reference.tensors[i].second)) << bench.tensors[i].first;
    }
  }
}

}  // namespace
}  // namespace fastloop
