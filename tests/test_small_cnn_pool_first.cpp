// --pool-before-bn (model.pool_before_bn): small_cnn's stages as conv, max-pool, BN, ReLU. Same parameters; in
// eval mode (BN a per-channel affine map with positive scale) the same function as the default order; in
// training the BN's batch statistics are of the pooled values; --fold-bn does not fold across the pool; other
// models refuse the flag.
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

using namespace fastloop;

namespace {

Classifier pool_first_net(bool pool_before_bn) {
  torch::manual_seed(0);
  return model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10).pool_before_bn(pool_before_bn));
}

/// The default-order parameter and buffer names, with each stage's BN moved from child 1 to child 2.
std::string pool_first_name(std::string name) {
  for (const std::string stage : {"stage1.1.", "stage2.1."})
    if (name.rfind(stage, 0) == 0) name.replace(stage.size() - 2, 1, "2");
  return name;
}

/// Copies `from`'s parameters and buffers into `to` (pool-first names).
void copy_state(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto to_params = to.named_parameters();
  for (const auto& item : from.named_parameters()) to_params[pool_first_name(item.key())].copy_(item.value());
  auto to_buffers = to.named_buffers();
  for (const auto& item : from.named_buffers()) to_buffers[pool_first_name(item.key())].copy_(item.value());
}

/// Trained-looking BatchNorm statistics and affine maps (positive scales), so eval mode is not the identity.
void perturb_batchnorms(torch::nn::Module& model) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(7);
  for (const auto& item : model.named_buffers()) {
    if (item.key().find("running_mean") != std::string::npos) item.value().copy_(torch::randn_like(item.value()) * 0.3);
    if (item.key().find("running_var") != std::string::npos) item.value().copy_(torch::rand_like(item.value()) + 0.5);
  }
  for (const auto& item : model.named_parameters()) {
    if (item.value().dim() != 1 || item.key() == "fc.bias") continue;
    if (item.key().find(".weight") != std::string::npos) item.value().copy_(torch::rand_like(item.value()) + 0.5);
    else item.value().copy_(torch::randn_like(item.value()) * 0.1);
  }
}

}  // namespace

TEST(SmallCnnPoolFirst, SameParametersWithEachStagesBatchNormAfterThePool) {
  auto plain = pool_first_net(false), pooled = pool_first_net(true);
  const auto plain_names = plain->named_parameters().keys();
  const auto pooled_names = pooled->named_parameters().keys();
  ASSERT_EQ(plain_names.size(), pooled_names.size());
  for (size_t i = 0; i < plain_names.size(); ++i) EXPECT_EQ(pool_first_name(plain_names[i]), pooled_names[i]);
  EXPECT_TRUE(pooled->named_parameters().contains("stage1.2.weight"));
  EXPECT_TRUE(pooled->named_parameters().contains("stage2.2.bias"));
  EXPECT_TRUE(plain->named_parameters().contains("stage1.1.weight"));
}

TEST(SmallCnnPoolFirst, InEvalModeItComputesTheDefaultOrdersFunction) {
  auto plain = pool_first_net(false), pooled = pool_first_net(true);
  perturb_batchnorms(*plain);
  copy_state(*plain, *pooled);
  plain->eval(), pooled->eval();
  torch::manual_seed(3);
  const auto images = torch::randn({4, 1, 28, 28});
  torch::NoGradGuard no_grad;
  const auto expected = plain->forward(images), got = pooled->forward(images);
  EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 1e-5)) << (got - expected).abs().max().item<double>();
}

TEST(SmallCnnPoolFirst, TrainingBatchNormSeesThePooledValues) {
  auto pooled = pool_first_net(true);
  auto& model = *pooled;
  torch::manual_seed(5);
  const auto images = torch::randn({8, 1, 28, 28});
  model.train();
  at::Tensor conv_out;
  {
    torch::NoGradGuard no_grad;
    auto stem = model.named_children()["stem"]->as<torch::nn::Sequential>();
    auto stage1 = model.named_children()["stage1"]->as<torch::nn::Sequential>();
    conv_out = stage1->ptr(0)->as<torch::nn::Conv2d>()->forward(stem->forward(images.clone()));
  }
  model.forward(images);
  // momentum 0.1 from a zero running mean: 0.1 x the batch mean of the pooled conv output, not of the conv output
  const auto pooled_mean = torch::max_pool2d(conv_out, 2).mean({0, 2, 3});
  const auto unpooled_mean = conv_out.mean({0, 2, 3});
  const auto running = model.named_buffers()["stage1.2.running_mean"];
  EXPECT_TRUE(torch::allclose(running, 0.1 * pooled_mean, 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(running, 0.1 * unpooled_mean, 1e-3, 1e-4));
  const auto logits = model.forward(images);
  logits.sum().backward();
  EXPECT_GT(model.named_parameters()["stage2.2.weight"].grad().abs().sum().item<double>(), 0.0);
}

TEST(SmallCnnPoolFirst, FoldBnLeavesTheBatchNormsAfterAPoolUnfolded) {
  auto pooled = pool_first_net(true), plain = pool_first_net(false);
  EXPECT_EQ(conv_batchnorm_pairs(*plain).size(), 7u);
  EXPECT_EQ(conv_batchnorm_pairs(*pooled).size(), 5u);  // stem and the two residual pairs' four
  for (const auto& pair : conv_batchnorm_pairs(*pooled)) EXPECT_EQ(pair.bn_name.rfind("stage", 0), std::string::npos);

  perturb_batchnorms(*pooled);
  {
    torch::NoGradGuard no_grad;
    pooled->named_parameters()["stage1.2.weight"].mul_(-1.0);  // a negative scale: max-pool and BN do not commute
  }
  pooled->eval();
  torch::manual_seed(4);
  const auto images = torch::randn({3, 1, 28, 28});
  torch::NoGradGuard no_grad;
  const auto unfolded = pooled->forward(images);
  BatchNormFolding folding(*pooled);
  EXPECT_EQ(folding.folded(), 5u);
  EXPECT_TRUE(torch::allclose(pooled->forward(images), unfolded, 1e-4, 1e-5));
}

TEST(SmallCnnPoolFirst, OtherModelsRefuseIt) {
  try {
    model_make(ModelOptions("resnet18").pool_before_bn(true));
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--pool-before-bn"), std::string::npos) << e.what();
  }
  TrainConfig config;
  config.model.name = "mobilenet_v2";
  config.model.pool_before_bn = true;
  EXPECT_THROW(config_validate(config), InputError);
  config.model.name = "small_cnn";
  EXPECT_NO_THROW(config_validate(config));
}
