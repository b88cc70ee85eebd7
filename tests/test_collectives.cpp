// Collectives take tensors from anywhere: ProcessGroup moves each to the device its backend works on
// (the group's GPU for NCCL, which refuses CPU tensors; the CPU for Gloo) and back, so the trainer's
// agreement checks (any()), evaluation sums and the bench's barrier work on every backend. A group of
// one rank on 127.0.0.1 shows it without a launcher.
#include "fastloop/dist/ddp.h"
#include "fastloop/dist/launch.h"
#include "fastloop/dist/process_group.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/nn/modules/linear.h>

namespace fastloop {
namespace {

DistEnv group_of_one() {
  DistEnv env;
  env.master_port = free_port();
  env.source = "torchrun";
  return env;
}

void expect_collectives_from_the_cpu(ProcessGroup& group) {
  at::Tensor sums = at::tensor({1.5, 2.0, 3.0}, at::kDouble);  // on the CPU, as evaluate()'s and any()'s
  group.allreduce(sums, "test all-reduce");
  EXPECT_TRUE(sums.device().is_cpu());
  EXPECT_TRUE(at::equal(sums, at::tensor({1.5, 2.0, 3.0}, at::kDouble)));
  EXPECT_TRUE(group.any(true, "test any"));
  EXPECT_FALSE(group.any(false, "test any"));
  at::Tensor weights = at::arange(6, at::kFloat).reshape({2, 3}).t();  // strided, CPU
  group.broadcast({weights}, "test broadcast");
  EXPECT_TRUE(at::equal(weights, at::arange(6, at::kFloat).reshape({2, 3}).t()));
}

TEST(Collectives, CpuTensorsGoThroughAGlooGroup) {
  ProcessGroup group(group_of_one(), c10::kCPU, ProcessGroupOptions().backend("gloo").timeout_s(30));
  expect_collectives_from_the_cpu(group);
}

// ProcessGroupNCCL refuses CPU tensors ("Tensors must be CUDA and dense"): before the move to the group's
// device, every multi-GPU run died at its first step's any() and was reported as a lost rank.
TEST(Collectives, CpuTensorsGoThroughAnNcclGroup_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  ProcessGroup group(group_of_one(), c10::Device(c10::kCUDA, 0), ProcessGroupOptions().backend("nccl").timeout_s(60));
  expect_collectives_from_the_cpu(group);
}

// PyTorch's DDP caps the first bucket (the last layers' gradients, reduced first) at 1 MiB so the first
// all-reduce starts early in backward; one 25 MiB bucket would start only when backward is done.
TEST(Collectives, TheFirstGradientBucketIsCappedAtOneMebibyte) {
  ProcessGroup group_storage(group_of_one(), c10::kCPU, ProcessGroupOptions().backend("gloo").timeout_s(30));
  std::shared_ptr<ProcessGroup> group(&group_storage, [](ProcessGroup*) {});
  torch::nn::Module model;
  model.register_parameter("a", at::zeros({768, 1024}));  // 3 MiB
  model.register_parameter("b", at::zeros({768, 1024}));  // 3 MiB
  model.register_parameter("c", at::zeros({128, 1024}));  // 0.5 MiB: registered last, its gradient is ready first
  DistributedDataParallel capped(model, group);
  EXPECT_EQ(capped.bucket_count(), 2) << "[c] then [b, a]: 0.5 MiB, then 6 MiB of the 25 MiB allowed";
}

// One GPU, DDP over Gloo: the buckets live on the GPU (Gloo reduces CUDA tensors through host copies), the
// hooks fire from CUDA backward, and the averaged gradients of a group of one equal plain backward's.
TEST(Collectives, DdpOverGlooReducesCudaGradientsOnOneGpu_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const c10::Device cuda(c10::kCUDA, 0);
  ProcessGroup group_storage(group_of_one(), cuda, ProcessGroupOptions().backend("gloo").timeout_s(60));
  std::shared_ptr<ProcessGroup> group(&group_storage, [](ProcessGroup*) {});
  torch::manual_seed(3);
  torch::nn::Linear plain(64, 10), wrapped(64, 10);
  plain->to(cuda), wrapped->to(cuda);
  {
    at::NoGradGuard no_grad;
    wrapped->weight.copy_(plain->weight), wrapped->bias.copy_(plain->bias);
  }
  DistributedDataParallel ddp(*wrapped, group, DdpOptions().bucket_bytes(1024));  // several buckets
  EXPECT_GT(ddp.bucket_count(), 1);
  const at::Tensor x = at::randn({32, 64}, at::TensorOptions(cuda));
  plain->forward(x).square().mean().backward();
  ddp.prepare_micro_step(/*sync=*/true);
  wrapped->forward(x).square().mean().backward();
  ddp.finish_gradient_sync();
  EXPECT_TRUE(wrapped->weight.grad().is_cuda());
  EXPECT_TRUE(at::allclose(wrapped->weight.grad(), plain->weight.grad()));
  EXPECT_TRUE(at::allclose(wrapped->bias.grad(), plain->bias.grad()));
}

}  // namespace
}  // namespace fastloop
