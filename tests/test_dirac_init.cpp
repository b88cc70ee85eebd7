// --dirac-init (model.dirac_init, models/init.h): each ungrouped convolution's first min(in, out) filters start
// as torch.nn.init.dirac_ makes them, so a square 3x3 convolution with padding 1 is the identity; the other
// filters keep the model's kaiming initialisation.
#include "test_support.h"
#include "fastloop/data/sources/source.h"
#include "fastloop/models/init.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/small_cnn.h"
#include "fastloop/train/setup.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace fastloop::dirac_init_tests {

namespace {

std::vector<torch::nn::Conv2dImpl*> conv_layers(torch::nn::Module& model) {
  std::vector<torch::nn::Conv2dImpl*> out;
  for (const auto& m : model.modules())
    if (auto* c = dynamic_cast<torch::nn::Conv2dImpl*>(m.get())) out.push_back(c);
  return out;
}

/// torch.nn.init.dirac_ of an [n, in, 3, 3] weight, written out: 1 at [i, i, 1, 1].
at::Tensor dirac_filters(int64_t n, int64_t in) {
  auto w = torch::zeros({n, in, 3, 3});
  for (int64_t i = 0; i < n; ++i) w[i][i][1][1] = 1.0;
  return w;
}

}  // namespace

TEST(DiracInit, FirstMinInOutFiltersAreTheIdentityAndTheOthersKeepTheirInit) {
  torch::manual_seed(0);
  auto model = model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
  const auto convs = conv_layers(*model);
  ASSERT_EQ(convs.size(), 7u);  // stem, stage1, stage2 and two in each residual block
  std::vector<at::Tensor> before;
  for (auto* c : convs) before.push_back(c->weight.detach().clone());

  EXPECT_EQ(init_convs_dirac(*model), convs.size());
  for (size_t i = 0; i < convs.size(); ++i) {
    const auto& w = convs[i]->weight;
    const int64_t n = std::min(w.size(0), w.size(1));
    EXPECT_TRUE(torch::equal(w.narrow(0, 0, n), dirac_filters(n, w.size(1)))) << "conv " << i;
    EXPECT_TRUE(torch::equal(w.narrow(0, n, w.size(0) - n), before[i].narrow(0, n, w.size(0) - n)))
        << "conv " << i << "'s other filters must keep their kaiming values";
  }
  auto* square = convs[3];  // res1's first: 32 -> 32, all filters the identity
  ASSERT_EQ(square->weight.size(0), square->weight.size(1));
  const auto x = torch::randn({2, square->weight.size(1), 7, 7});
  EXPECT_TRUE(torch::allclose(square->forward(x), x, 0, 1e-6)) << "a square 3x3 dirac conv is the identity";
}

TEST(DiracInit, TheRunsModelStartsFromItAndOnlyWhenAsked) {
  TrainConfig config = test::tiny_config(64, 16);
  const DatasetSplits data = data_load(config.data);
  config.model.dirac_init = true;
  TrainSetup dirac = train_setup(config, data.train, c10::kCPU, nullptr);
  config.model.dirac_init = false;
  TrainSetup plain = train_setup(config, data.train, c10::kCPU, nullptr);
  auto* stage1 = dynamic_cast<SmallCNNImpl&>(*dirac.model).stage1->ptr(0)->as<torch::nn::Conv2d>();
  auto* plain_stage1 = dynamic_cast<SmallCNNImpl&>(*plain.model).stage1->ptr(0)->as<torch::nn::Conv2d>();
  const int64_t in = stage1->weight.size(1);
  EXPECT_TRUE(torch::equal(stage1->weight.narrow(0, 0, in).contiguous(), dirac_filters(in, in)));
  EXPECT_FALSE(torch::equal(plain_stage1->weight.narrow(0, 0, in).contiguous(), dirac_filters(in, in)));
  // Same seed: the filters past the identity ones are the plain run's.
  EXPECT_TRUE(torch::equal(stage1->weight.narrow(0, in, stage1->weight.size(0) - in),
                           plain_stage1->weight.narrow(0, in, stage1->weight.size(0) - in)));
}

TEST(DiracInit, AModelWithoutConvolutionsChangesNothing) {
  torch::nn::Sequential linear(torch::nn::Linear(4, 2));
  const auto before = linear->parameters()[0].clone();
  EXPECT_EQ(init_convs_dirac(*linear), 0u);
  EXPECT_TRUE(torch::equal(linear->parameters()[0], before));
}

}  // namespace fastloop::dirac_init_tests
