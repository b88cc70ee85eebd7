// --bn-weight-frozen and --bn-momentum (train/batchnorm_configure.h), airbench's BatchNorm: the weights stay
// at 1 through training and out of the optimizer while biases and convolutions train, and one training
// forward moves the running mean the given fraction of the way to the batch mean.
#include "stepper_steps.h"
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/small_cnn.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/stepper.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>
#include <vector>

namespace fastloop::bn_tricks_tests {

namespace {

std::vector<torch::nn::BatchNorm2dImpl*> batchnorms(torch::nn::Module& model) {
  std::vector<torch::nn::BatchNorm2dImpl*> out;
  for (const auto& m : model.modules())
    if (auto* bn = dynamic_cast<torch::nn::BatchNorm2dImpl*>(m.get())) out.push_back(bn);
  return out;
}

}  // namespace

TEST(BnTricks, FrozenWeightsStayAtOneWhileBiasesAndConvolutionsTrain) {
  TrainConfig config = test::tiny_config(64, 16);
  config.model.bn_weight_frozen = true;
  config.model.whiten_stem = "off";  // every conv trains (the whitened stem is frozen: test_whiten.cpp)
  config.optim.ema_decay = 0.9;
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  const auto bns = batchnorms(*setup.model);
  ASSERT_EQ(bns.size(), 7u);  // small_cnn: stem, stage1 and stage2, two in each residual pair
  std::vector<at::Tensor> biases, convs;
  for (auto* bn : bns) biases.push_back(bn->bias.detach().clone());
  for (const auto& p : setup.model->parameters())
    if (p.dim() == 4) convs.push_back(p.detach().clone());

  test::train_steps(setup, 4);
  for (size_t i = 0; i < bns.size(); ++i) {
    EXPECT_FALSE(bns[i]->weight.requires_grad());
    EXPECT_TRUE(torch::equal(bns[i]->weight, torch::ones_like(bns[i]->weight))) << "BatchNorm " << i;
    EXPECT_FALSE(torch::equal(bns[i]->bias, biases[i])) << "BatchNorm " << i << "'s bias must train";
  }
  size_t conv = 0;
  for (const auto& item : setup.model->named_parameters()) {
    if (item.value().dim() != 4) continue;
    EXPECT_FALSE(torch::equal(item.value(), convs[conv++])) << item.key() << " must train";
  }
  for (auto* bn : batchnorms(setup.ema->module()))  // the average's BatchNorms are the model's, weights at 1
    EXPECT_TRUE(torch::equal(bn->weight, torch::ones_like(bn->weight)));
}

TEST(BnTricks, OptimizerHoldsNoFrozenWeightAndEveryOtherParameter) {
  TrainConfig config = test::tiny_config(64, 16);
  config.model.bn_weight_frozen = true;
  config.model.whiten_stem = "off";  // every parameter but the frozen weights is in a group
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  std::set<const void*> held;
  for (auto& group : setup.optimizer->param_groups())
    for (const auto& p : group.params()) held.insert(p.unsafeGetTensorImpl());
  std::set<const void*> frozen;
  for (auto* bn : batchnorms(*setup.model)) {
    frozen.insert(bn->weight.unsafeGetTensorImpl());
    EXPECT_EQ(held.count(bn->weight.unsafeGetTensorImpl()), 0u) << "a frozen BatchNorm weight is in a group";
    EXPECT_EQ(held.count(bn->bias.unsafeGetTensorImpl()), 1u) << "BatchNorm biases still train";
  }
  const auto params = setup.model->parameters();
  EXPECT_EQ(held.size(), params.size() - frozen.size());

  config.model.bn_weight_frozen = false;  // the default: every parameter trains
  TrainSetup plain = train_setup(config, data.train, c10::kCPU, nullptr);
  size_t plain_held = 0;
  for (auto& group : plain.optimizer->param_groups()) plain_held += group.params().size();
  EXPECT_EQ(plain_held, params.size());
}

TEST(BnTricks, OneTrainingForwardMovesTheRunningMeanMomentumOfTheWayToTheBatchMean) {
  TrainConfig config = test::tiny_config(64, 16);
  config.model.bn_momentum = 0.4;
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  for (auto* bn : batchnorms(*setup.model)) EXPECT_EQ(bn->options.momentum().value(), 0.4);

  // The model's first BatchNorm, fed by the stem's convolution: its batch mean computed here.
  auto* model = dynamic_cast<SmallCNNImpl*>(setup.model.get());
  ASSERT_NE(model, nullptr);
  auto* bn = batchnorms(*model->stem).front();
  torch::manual_seed(5);
  const auto images = (torch::randn({16, 1, 12, 12}) + 2.0).contiguous(at::MemoryFormat::ChannelsLast);
  const auto before = bn->running_mean.clone();
  at::Tensor batch_mean;
  {
    torch::NoGradGuard no_grad;
    batch_mean = model->stem->ptr(0)->as<torch::nn::Conv2d>()->forward(images).mean({0, 2, 3});
  }
  setup.model->train();
  setup.model->forward(images);
  const auto expected = before + 0.4 * (batch_mean - before);
  EXPECT_TRUE(torch::allclose(bn->running_mean, expected, /*rtol=*/1e-5, /*atol=*/1e-6))
      << bn->running_mean << expected;
  EXPECT_GT((batch_mean - before).abs().max().item<float>(), 0.05f) << "the batch mean must differ to test this";
}

TEST(BnTricks, ConfigRefusesMomentumOutsideZeroToOne) {
  TrainConfig config;
  for (double m : {0.0, -0.1, 1.5}) {
    config.model.bn_momentum = m;
    EXPECT_THROW(config_validate(config), InputError) << m;
  }
  config.model.bn_momentum = 1.0;
  EXPECT_NO_THROW(config_validate(config));
}

}  // namespace fastloop::bn_tricks_tests
