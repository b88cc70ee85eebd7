// `fastloop train` end to end on a GPU with what the first GPU run would use at once: --cuda-graph with
// the threaded loader and the pinned ring, evaluation, a checkpoint and a resume — which must warm up
// again in its own process before it captures. Skipped where no GPU is visible.
#include "test_support.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

namespace fastloop {
namespace {

TEST(CudaTrain, GraphedTrainingWithLoaderEvaluationAndResume_CUDA) {
  const test::TempDir tmp;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const std::string dir = tmp.sub("cuda_train");
  const std::string run = "train --device cuda --data synthetic:3x32x32:2048 --model small_cnn --batch-size 64 "
                          "--epochs 2 --workers 2 --pin-memory --cuda-graph --amp fp16 --checkpoint-dir " + dir;
  const auto first = test::cli_run(run + " --max-steps 10");
  ASSERT_EQ(first.code, 0) << first.output;
  EXPECT_NE(first.output.find("cuda-graph: training step captured"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("test accuracy"), std::string::npos) << first.output;
  const auto resumed = test::cli_run(run + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("cuda-graph: training step captured"), std::string::npos)
      << "a resumed run captures after its own warm-up: " << resumed.output;
  // --max-steps ends the first run's epoch 0 early (evaluated, checkpointed); the resume trains epoch 1: 10 + 32.
  EXPECT_NE(resumed.output.find("after 42 steps"), std::string::npos) << resumed.output;
}

// A resumed run draws the same CUDA random numbers (dropout, on-device augmentation) as the uninterrupted
// one: the checkpoint keeps every device's generator state, as torch.cuda.get_rng_state_all() does.
TEST(CudaTrain, CheckpointRestoresTheCudaGenerators_CUDA) {
  const test::TempDir tmp;
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const std::string path = tmp.sub("cuda_rng") + "/rng.ckpt";
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  torch::manual_seed(7);  // seeds the CUDA generators too
  checkpoint_save(path, *model, nullptr, TrainPosition{}, "{}");
  const at::Tensor first = torch::rand({16}, torch::kCUDA);
  torch::rand({1000}, torch::kCUDA);  // the generator moves on
  Checkpoint::read(path).restore(*model, nullptr, /*rng=*/true);
  EXPECT_TRUE(torch::equal(torch::rand({16}, torch::kCUDA), first));
}

// A step that cannot be captured (its forward reads a value on the host, which a capture forbids) ends
// the capture cleanly: one printed reason, the run goes on with eager steps to its end, and nothing is left
// capturing — the next run in the same process captures its own step.
struct HostSyncNetImpl : ClassifierImpl {
  explicit HostSyncNetImpl(const ModelOptions& o)
      : fc(register_module("fc", torch::nn::Linear(o.in_channels(), o.num_classes()))) {}
  at::Tensor forward(at::Tensor x) override {
    const at::Tensor pooled = x.mean({2, 3});
    if (pooled.sum().item<float>() > 1e30f) return fc(pooled * 0.0);  // the host read the capture refuses
    return fc(pooled);
  }
  torch::nn::Linear fc;
};

TEST(CudaTrain, AStepThatCannotBeCapturedFallsBackToEagerStepsWithItsReason_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  model_register("host_sync_net", [](const ModelOptions& o) { return std::make_shared<HostSyncNetImpl>(o); });
  TrainConfig config = test::tiny_config(512, 32);
  config.perf.device = "cuda";
  config.perf.cuda_graph = true;
  config.run.max_steps = 8;
  TrainControl quiet;
  quiet.progress = false;
  config.model.name = "host_sync_net";
  testing::internal::CaptureStdout();
  const TrainSummary failed = train(config, quiet);
  const std::string said = testing::internal::GetCapturedStdout();
  EXPECT_EQ(failed.position.step, 8) << said;
  EXPECT_NE(said.find("cuda-graph: capture failed"), std::string::npos) << said;
  config.model.name = "small_cnn";
  testing::internal::CaptureStdout();
  const TrainSummary next = train(config, quiet);
  const std::string next_said = testing::internal::GetCapturedStdout();
  EXPECT_EQ(next.position.step, 8) << next_said;
  EXPECT_NE(next_said.find("cuda-graph: training step captured"), std::string::npos) << next_said;
}

}  // namespace
}  // namespace fastloop
