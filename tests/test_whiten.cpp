// --whiten-stem (models/whiten.h, train/stem_whitening.h), airbench94's first layer: the filters whiten the
// patches they were computed from (second moment ~ identity), come in +/- pairs, and in a run the stem starts
// at them and stays there while every other weight trains; --init-from's stem is kept, other models refuse.
#include "stepper_steps.h"
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/whiten.h"
#include "fastloop/train/schedule.h"
#include "fastloop/train/setup.h"
#include "fastloop/train/stem_whitening.h"
#include "fastloop/train/stepper.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>
#include <string>

using namespace fastloop;

namespace {

/// Images whose 3x3 patches are strongly correlated across pixels and channels: white noise through a fixed
/// smoothing, channel-mixing 5x5 filter, plus a per-channel offset (the moment is uncentred).
at::Tensor correlated_images(int64_t n, int64_t channels, int64_t side) {
  torch::manual_seed(3);
  const auto noise = torch::randn({n, channels, side + 4, side + 4});
  const auto mixing = torch::rand({channels, channels, 5, 5}) + 0.5;
  return torch::conv2d(noise, mixing / mixing.sum({1, 2, 3}, true) * 3.0) + 0.3;
}

/// Second moment [K, K] over every pixel of `features` [N, K, H, W]: E[f f^T].
at::Tensor second_moment(const at::Tensor& features) {
  const auto flat = features.transpose(0, 1).reshape({features.size(1), -1}).to(at::kDouble);
  return flat.mm(flat.t()) / static_cast<double>(flat.size(1));
}

at::Tensor stem_weight(ClassifierImpl& model) { return model.named_parameters()["stem.0.weight"]; }

}  // namespace

TEST(Whiten, FiltersWhitenThePatchesTheyWereComputedFrom) {
  const auto images = correlated_images(64, 2, 12);
  // The padded 3x3 patches, as the conv sees them: far from white before.
  const auto patches = torch::im2col(images, {3, 3}, {1, 1}, {1, 1}, {1, 1}).unsqueeze(-1);  // [N, 18, 144, 1]
  const auto raw = second_moment(patches);
  EXPECT_GT((raw - torch::eye(18, at::kDouble)).abs().max().item<double>(), 0.3) << "the test needs correlation";

  // Without eps to speak of: the first 8 channels' outputs are white.
  const auto white = patch_whitening_filters(images, 3, 16, 1e-8);
  ASSERT_EQ(white.sizes(), (at::IntArrayRef{16, 2, 3, 3}));
  const auto identity = torch::eye(8, at::kDouble);
  const auto moment = second_moment(torch::conv2d(images, white.slice(0, 0, 8), {}, 1, 1));
  EXPECT_LT((moment - identity).abs().max().item<double>(), 1e-3) << moment;

  // airbench's eps shrinks direction i's variance to λ / (λ + eps), where λ + eps = 1 / |filter i|^2; still
  // uncorrelated.
  const double eps = 5e-4;
  const auto filters = patch_whitening_filters(images, 3, 16, eps);
  const auto energy = filters.slice(0, 0, 8).flatten(1).norm(2, 1).pow(-2).to(at::kDouble);  // λ + eps
  const auto damped = second_moment(torch::conv2d(images, filters.slice(0, 0, 8), {}, 1, 1));
  EXPECT_LT((damped - torch::diag(1.0 - eps / energy)).abs().max().item<double>(), 1e-4) << damped;
  EXPECT_LT((damped - identity).abs().max().item<double>(), 0.05) << damped;

  // The first 8 are the top eigenvectors: the remaining directions carry no more energy than any of them
  // (λ non-increasing).
  for (int64_t i = 1; i < 8; ++i) EXPECT_LE(energy[i].item<double>(), energy[i - 1].item<double>() * (1 + 1e-6));
  const auto all = patch_whitening_filters(images, 3, 36, 5e-4);
  EXPECT_LE(all[9].flatten().norm().pow(-2).item<double>(), energy[7].item<double>() * (1 + 1e-6));
}

TEST(Whiten, FiltersComeInPlusMinusPairsAndStopAtThePatchDimension) {
  const auto images = correlated_images(8, 1, 10);
  const auto filters = patch_whitening_filters(images, 3, 16, 5e-4);
  ASSERT_EQ(filters.size(0), 16);
  EXPECT_TRUE(torch::equal(filters.slice(0, 8), -filters.slice(0, 0, 8)));
  EXPECT_GT(filters.flatten(1).norm(2, 1).min().item<float>(), 0.0f) << "a pair of empty filters";
  // 1 channel x 3 x 3: nine eigenvectors, so at most 18 filters; an odd count leaves the last row out.
  EXPECT_EQ(patch_whitening_filters(images, 3, 32, 5e-4).size(0), 18);
  EXPECT_EQ(patch_whitening_filters(images, 3, 7, 5e-4).size(0), 6);
  EXPECT_THROW(patch_whitening_filters(images, 2, 16, 5e-4), c10::Error);
  EXPECT_THROW(patch_whitening_filters(images, 3, 16, 0.0), c10::Error);
}

TEST(Whiten, ImagesAreNormalisedAsTheLoaderDoesWithoutAugmentation) {
  const TrainConfig config = test::tiny_config(64, 16);
  const DatasetSplits data = data_load(config.data);
  const auto images = whitening_images(data.train, 40);
  ASSERT_EQ(images.sizes(), (at::IntArrayRef{40, 1, 12, 12}));
  const auto expected = (data.train.images.slice(0, 0, 40).to(at::kFloat) / 255.0f - data.train.mean[0]) /
                        data.train.stddev[0];
  EXPECT_TRUE(torch::allclose(images, expected, 1e-5, 1e-6));
  EXPECT_EQ(whitening_images(data.train).size(0), 64);  // fewer than 5000: all of them
}

TEST(Whiten, StemStartsWhitenedStaysFixedAndIsInNoGroupWhileTheRestTrains) {
  TrainConfig config = test::tiny_config(64, 16);
  config.model.whiten_stem = "on";
  const DatasetSplits data = data_load(config.data);
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  const auto stem = stem_weight(*setup.model);
  EXPECT_FALSE(stem.requires_grad());
  const auto expected = patch_whitening_filters(whitening_images(data.train), 3, 16, kWhiteningEps);
  EXPECT_TRUE(torch::allclose(stem, expected));

  std::set<const void*> held;
  for (auto& group : setup.optimizer->param_groups())
    for (const auto& p : group.params()) held.insert(p.unsafeGetTensorImpl());
  EXPECT_EQ(held.count(stem.unsafeGetTensorImpl()), 0u) << "the whitened stem is in an optimizer group";
  EXPECT_EQ(held.size(), setup.model->parameters().size() - 1);

  const auto before_stem = stem.detach().clone();
  std::vector<std::pair<std::string, at::Tensor>> before;
  for (const auto& item : setup.model->named_parameters())
    if (item.key() != "stem.0.weight") before.emplace_back(item.key(), item.value().detach().clone());
  test::train_steps(setup, 3);
  EXPECT_TRUE(torch::equal(stem_weight(*setup.model), before_stem)) << "the whitened stem moved";
  for (const auto& [name, value] : before) {
    if (value.dim() <= 1) continue;  // conv and linear weights: each must have moved
    EXPECT_FALSE(torch::equal(setup.model->named_parameters()[name], value)) << name << " must train";
  }
}

TEST(Whiten, InitFromKeepsItsStemAndOnlyFreezesIt) {
  test::TempDir dir;
  TrainConfig config = test::tiny_config(64, 16);
  const DatasetSplits data = data_load(config.data);
  config.run.seed = 7;
  Classifier source = model_make_for(config.model, data.train.channels(), data.train.num_classes);
  const std::string weights = dir / "weights.safetensors";
  safetensors_write(weights, model_state_export(*source), {});

  config.run.seed = 0;  // a different fresh init, so the stem can only come from the file
  config.run.init_from = weights;
  config.model.whiten_stem = "on";
  TrainSetup setup = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_TRUE(torch::equal(stem_weight(*setup.model), stem_weight(*source)));
  EXPECT_FALSE(stem_weight(*setup.model).requires_grad());
}

TEST(Whiten, OtherModelsAreRefused) {
  TrainConfig config = test::tiny_config(64, 16);
  config.model.whiten_stem = "on";
  config.model.name = "resnet18";
  try {
    config_validate(config);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--whiten-stem"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("resnet18"), std::string::npos) << e.what();
  }
  const DatasetSplits data = data_load(config.data);
  auto resnet = model_make(ModelOptions("resnet18").in_channels(1));
  EXPECT_THROW(stem_whitening_configure(*resnet, data.train, "resnet18", true), InputError);
}

TEST(Whiten, AutoWhitensSmallCnnOnlyAndOffTrainsTheStem) {
  TrainConfig config = test::tiny_config(64, 16);
  ASSERT_EQ(config.model.whiten_stem, "auto");  // the default
  EXPECT_TRUE(whiten_stem_on(config.model));
  const DatasetSplits data = data_load(config.data);
  TrainSetup whitened = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_FALSE(stem_weight(*whitened.model).requires_grad());
  const auto expected = patch_whitening_filters(whitening_images(data.train), 3, 16, kWhiteningEps);
  EXPECT_TRUE(torch::allclose(stem_weight(*whitened.model), expected));

  config.model.whiten_stem = "off";
  EXPECT_FALSE(whiten_stem_on(config.model));
  TrainSetup plain = train_setup(config, data.train, c10::kCPU, nullptr);
  EXPECT_TRUE(stem_weight(*plain.model).requires_grad());
  EXPECT_FALSE(torch::allclose(stem_weight(*plain.model), expected));

  config.model.whiten_stem = "auto";
  config.model.name = "resnet18";  // auto leaves the other models as they are, and is not refused
  EXPECT_FALSE(whiten_stem_on(config.model));
  EXPECT_NO_THROW(config_validate(config));
}
