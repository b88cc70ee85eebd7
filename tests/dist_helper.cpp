// A rank of the distributed tests: a small convolutional model without batch statistics, trained for a
// few steps through DistributedDataParallel on synthetic data, writing its first step's gradients and
// its final parameters so a test can compare ranks with one process. Run directly (one process) or
// under `fastloop launch` / with torchrun variables (ranks).
//   fastloop_dist_helper OUT BATCH ACCUMULATE STEPS BUCKET_BYTES CHANNELS_LAST(0|1) [AMP(off|fp16)]
#include "fastloop/core/config.h"
#include "fastloop/data/loader/loader.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/dist/ddp.h"
#include "fastloop/models/classifier.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/step.h"

#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/serialize.h>

#include <cstdio>
#include <string>

namespace {
using namespace fastloop;

// conv 1->8 3x3, relu, conv 8->16 3x3 stride 2, relu, mean over space, linear 16->10: no BatchNorm,
// so a batch split over ranks has exactly the gradient of the whole batch.
struct TinyNetImpl : ClassifierImpl {
  TinyNetImpl() {
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).stride(2).padding(1)));
    fc = register_module("fc", torch::nn::Linear(16, 10));
  }
  at::Tensor forward(at::Tensor x) override {
    x = conv2->forward(conv1->forward(x).relu()).relu();
    return fc->forward(x.mean({2, 3}));
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc{nullptr};
};

int run(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s OUT BATCH ACCUMULATE STEPS BUCKET_BYTES CHANNELS_LAST [AMP]\n", argv[0]);
    return 2;
  }
  const std::string out = argv[1];
  const int64_t batch = std::stoll(argv[2]), accumulate = std::stoll(argv[3]), steps = std::stoll(argv[4]);
  const int64_t bucket_bytes = std::stoll(argv[5]);
  const bool channels_last = std::string(argv[6]) == "1";
  const std::string amp = argc > 7 ? argv[7] : "off";
  at::set_num_threads(1);

  const DistEnv env = dist_env_detect();
  auto group = process_group_join(DistConfig{}, env, at::kCPU);
  torch::manual_seed(7);  // every rank makes different weights without the broadcast: rank 0's must win
  if (group) torch::manual_seed(7 + static_cast<uint64_t>(group->rank()) * 1000);
  auto model = std::make_shared<TinyNetImpl>();
  if (channels_last) module_to_channels_last(*model);
  OptimConfig optim;
  optim.lr = 0.05;
  optim.weight_decay = 1e-4;
  auto optimizer = optimizer_make(optim, model->parameters(), false);
  GradScaler scaler(GradScalerOptions().enabled(amp_policy(amp).grad_scaling));
  std::unique_ptr<DistributedDataParallel> ddp;
  if (group) {
    ddp = std::make_unique<DistributedDataParallel>(*model, group, DdpOptions().bucket_bytes(bucket_bytes));
    scaler.set_found_inf_reduce([&group](at::Tensor& f) { group->allreduce(f, "found_inf", true); });
  }

  const DatasetSplits data = data_load("synthetic:1x12x12:256");
  LoaderOptions loader_options;
  loader_options.batch_size = batch;
  loader_options.workers = 0;
  loader_options.augment = augment_crop_flip(2);
  loader_options.sampler.seed = 3;
  loader_options.sampler.rank = group ? group->rank() : 0;
  loader_options.sampler.world_size = group ? group->size() : 1;
  loader_options.channels_last = channels_last;
  Loader loader(data.train, loader_options);
  loader.start_epoch(0);

  StepOptions step_options;
  step_options.amp = amp_policy(amp);
  std::vector<at::Tensor> first_grads;
  for (int64_t step = 0; step < steps; ++step) {
    for (int64_t micro = 0; micro < accumulate; ++micro) {
      auto b = loader.next();
      if (ddp) ddp->prepare_micro_step(micro == accumulate - 1);
      train_micro_step(*model, b->images, b->labels, step_options, accumulate, scaler);
    }
    if (ddp) ddp->finish_gradient_sync();
    if (step == 0)
      for (const auto& p : model->parameters()) first_grads.push_back(p.grad().clone());
    train_optimizer_step(*optimizer, scaler, step_options);
  }
  if (!group || group->rank() == 0) {
    std::vector<at::Tensor> saved = first_grads;
    for (const auto& p : model->parameters()) saved.push_back(p.detach().contiguous());
    torch::save(saved, out);
  }
  if (ddp) {
    const DdpStats stats = ddp->stats();
    std::printf("buckets %lld allreduces %lld syncs %lld\n", static_cast<long long>(ddp->bucket_count()),
                static_cast<long long>(stats.allreduces), static_cast<long long>(stats.syncs));
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
