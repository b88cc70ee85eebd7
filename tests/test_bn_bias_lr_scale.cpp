// --bn-bias-lr-scale (optim.bn_bias_lr_scale, train/optim.h): the BatchNorm biases in a last optimizer group
// whose learning rate is the schedule's times the scale, every step (airbench's bias scaler). Their update is the
// scale times the plain one; every other parameter's is unchanged; models without a BatchNorm refuse the flag.
#include "stepper_steps.h"
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/train/batchnorm_configure.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/setup.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace fastloop::bn_bias_lr_scale_tests {

namespace {

double group_lr(const torch::optim::Optimizer& optimizer, size_t group) {
  return optimizer.param_groups()[group].options().get_lr();
}

/// A conv and a BatchNorm, one SGD step on fixed gradients at LR 0.05 with `scale`: the parameters after it.
std::vector<at::Tensor> one_step(double scale, bool fused, bool wd_all) {
  torch::manual_seed(3);
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(2, 4, 3).bias(false)),
                            torch::nn::BatchNorm2d(4));
  OptimConfig config;
  config.bn_bias_lr_scale = scale;
  config.wd_all = wd_all;
  const auto biases = batchnorm_biases(*net, "net");
  auto optimizer = optimizer_make(config, net->named_parameters(), fused, biases);
  optimizer_set_lr(*optimizer, 0.05, optimizer_lr_scales(*optimizer, config, biases));
  for (auto& p : net->parameters()) p.mutable_grad() = torch::full_like(p, 0.3);
  optimizer->step();
  std::vector<at::Tensor> after;
  for (const auto& p : net->parameters()) after.push_back(p.detach().clone());
  return after;  // conv weight, BN weight, BN bias
}

}  // namespace

TEST(BnBiasLrScale, BiasesAreALastGroupAtTheScaleTimesTheScheduleEveryStep) {
  TrainConfig config = test::tiny_config(64, 16);
  config.optim.bn_bias_lr_scale = 64.0;
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  const auto biases = batchnorm_biases(*setup.model, "small_cnn");
  ASSERT_EQ(biases.size(), 7u);  // small_cnn's seven BatchNorms
  const auto& groups = setup.optimizer->param_groups();
  ASSERT_EQ(groups.size(), 3u);  // [no decay, decay, BatchNorm biases]
  ASSERT_EQ(groups[2].params().size(), biases.size());
  for (size_t i = 0; i < biases.size(); ++i) EXPECT_TRUE(groups[2].params()[i].is_same(biases[i])) << i;
  for (size_t g = 0; g < 2; ++g)
    for (const auto& p : groups[g].params())
      for (const auto& b : biases) EXPECT_FALSE(p.is_same(b)) << "a BatchNorm bias in group " << g;
  EXPECT_EQ(setup.lr_scales, (std::vector<double>{1.0, 1.0, 64.0}));
  EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[2].options()).weight_decay(), 0.0);

  test::train_steps(setup, 3);  // the schedule sets the LR each step: the last group keeps its multiple
  EXPECT_GT(group_lr(*setup.optimizer, 0), 0.0);
  EXPECT_DOUBLE_EQ(group_lr(*setup.optimizer, 1), group_lr(*setup.optimizer, 0));
  EXPECT_DOUBLE_EQ(group_lr(*setup.optimizer, 2), 64.0 * group_lr(*setup.optimizer, 0));

  config.optim.bn_bias_lr_scale = 1.0;  // the default: timm's two groups, every scale 1
  TrainSetup plain = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_EQ(plain.optimizer->param_groups().size(), 2u);
  EXPECT_EQ(plain.lr_scales, (std::vector<double>{1.0, 1.0}));
}

TEST(BnBiasLrScale, TheBiasUpdateIsTheScaleTimesThePlainOneAndTheRestUnchanged) {
  for (bool fused : {false, true}) {
    const auto plain = one_step(1.0, fused, false), scaled = one_step(8.0, fused, false);
    torch::manual_seed(3);
    torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(2, 4, 3).bias(false)),
                              torch::nn::BatchNorm2d(4));
    const auto start = net->parameters();
    EXPECT_TRUE(torch::equal(plain[0], scaled[0])) << "the conv weight, fused " << fused;
    EXPECT_TRUE(torch::equal(plain[1], scaled[1])) << "the BatchNorm weight, fused " << fused;
    const auto plain_step = plain[2] - start[2], scaled_step = scaled[2] - start[2];
    EXPECT_GT(plain_step.abs().min().item<float>(), 0.0f);
    EXPECT_TRUE(torch::allclose(scaled_step, 8.0 * plain_step, 1e-5, 1e-7)) << scaled_step << plain_step;
  }
}

TEST(BnBiasLrScale, WdAllKeepsTheBiasDecayPerStepByDividingItsWeightDecay) {
  torch::nn::Sequential net(torch::nn::Conv2d(torch::nn::Conv2dOptions(2, 4, 3).bias(false)),
                            torch::nn::BatchNorm2d(4));
  OptimConfig config;
  config.wd_all = true;
  config.bn_bias_lr_scale = 64.0;
  const auto biases = batchnorm_biases(*net, "net");
  auto optimizer = optimizer_make(config, net->named_parameters(), false, biases);
  const auto& groups = optimizer->param_groups();
  ASSERT_EQ(groups.size(), 2u);  // [decay, BatchNorm biases]
  const auto& options = static_cast<const torch::optim::SGDOptions&>(groups[1].options());
  EXPECT_DOUBLE_EQ(options.lr() * options.weight_decay(), config.lr * config.weight_decay);
  EXPECT_DOUBLE_EQ(options.lr(), config.lr * 64.0);
}

TEST(BnBiasLrScale, RefusedWithoutABatchNormAndWhenNotPositive) {
  torch::nn::Sequential no_batchnorm(torch::nn::Linear(4, 2));
  try {
    batchnorm_biases(*no_batchnorm, "my_model.pt");
    FAIL() << "a model without BatchNorm must refuse --bn-bias-lr-scale";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("my_model.pt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--bn-bias-lr-scale"), std::string::npos) << e.what();
  }
  TrainConfig config;
  for (double scale : {0.0, -1.0}) {
    config.optim.bn_bias_lr_scale = scale;
    EXPECT_THROW(config_validate(config), InputError) << scale;
  }
  config.optim.bn_bias_lr_scale = 64.0;
  EXPECT_NO_THROW(config_validate(config));
}

}  // namespace fastloop::bn_bias_lr_scale_tests
