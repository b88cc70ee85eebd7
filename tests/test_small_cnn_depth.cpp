// --depth-delta (model.depth_delta): small_cnn's residual blocks per stage, 1 + d. With 0 the names are the Python
// twin's; extra blocks add exactly their convs and BatchNorms, under res1_2 / res2_2, and run in the forward;
// other models refuse the flag.
#include "fastloop/core/config.h"
#include "fastloop/core/errors.h"
#include "fastloop/models/flops.h"
#include "fastloop/models/registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

using namespace fastloop;

namespace {

Classifier small_cnn(int64_t depth_delta, int64_t in_channels = 1) {
  torch::manual_seed(0);
  return model_make(ModelOptions("small_cnn").in_channels(in_channels).num_classes(10).depth_delta(depth_delta));
}

std::vector<std::string> parameter_names(const torch::nn::Module& model) {
  return model.named_parameters().keys();
}

/// A residual pair's parameters under `block`: (conv BN ReLU) x 2 as children 0-5.
std::vector<std::string> block_names(const std::string& block) {
  return {block + ".0.weight", block + ".1.weight", block + ".1.bias",
          block + ".3.weight", block + ".4.weight", block + ".4.bias"};
}

std::vector<std::string> names_of(const std::vector<std::string>& stages) {
  std::vector<std::string> out;
  for (const auto& stage : stages) {
    if (stage == "fc") {
      out.insert(out.end(), {"fc.weight", "fc.bias"});
    } else if (stage == "stem" || stage == "stage1" || stage == "stage2") {
      out.insert(out.end(), {stage + ".0.weight", stage + ".1.weight", stage + ".1.bias"});
    } else {
      const auto block = block_names(stage);
      out.insert(out.end(), block.begin(), block.end());
    }
  }
  return out;
}

/// Parameters of one residual pair of `width` channels: two 3x3 convs without bias, two BatchNorms.
int64_t block_parameters(int64_t width) { return 2 * (width * width * 9 + 2 * width); }

std::string input_error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

}  // namespace

TEST(SmallCnnDepth, ZeroKeepsThePythonTwinsNames) {
  auto model = small_cnn(0);
  EXPECT_EQ(parameter_names(*model), names_of({"stem", "stage1", "res1", "stage2", "res2", "fc"}));
  std::vector<std::string> buffers = model->named_buffers().keys();
  EXPECT_EQ(buffers.size(), 7u * 3u);  // running_mean, running_var, num_batches_tracked of 7 BatchNorms
  EXPECT_EQ(buffers.front(), "stem.1.running_mean");
  EXPECT_EQ(buffers.back(), "res2.4.num_batches_tracked");
  EXPECT_EQ(parameter_count(*model), parameter_count(*model_make(ModelOptions("small_cnn").in_channels(1))));
}

TEST(SmallCnnDepth, OneAddsABlockPerStageUnderNewNames) {
  auto base = small_cnn(0), deeper = small_cnn(1);
  EXPECT_EQ(parameter_names(*deeper),
            names_of({"stem", "stage1", "res1", "res1_2", "stage2", "res2", "res2_2", "fc"}));
  EXPECT_EQ(parameter_count(*deeper) - parameter_count(*base), block_parameters(32) + block_parameters(96));

  const auto three = small_cnn(3);
  EXPECT_EQ(parameter_count(*three) - parameter_count(*base), 3 * (block_parameters(32) + block_parameters(96)));
  EXPECT_TRUE(three->named_parameters().contains("res2_4.4.bias"));
}

TEST(SmallCnnDepth, ExtraBlocksRunInTheForwardOn28pxAnd32pxImages) {
  for (const int64_t channels : {1, 3}) {
    const int64_t side = channels == 1 ? 28 : 32;
    auto model = small_cnn(1, channels);
    torch::manual_seed(1);
    const auto logits = model->forward(torch::randn({2, channels, side, side}));
    ASSERT_EQ(logits.sizes(), (at::IntArrayRef{2, 10}));
    logits.sum().backward();
    for (const char* name : {"res1_2.0.weight", "res2_2.3.weight"}) {
      const auto grad = model->named_parameters()[name].grad();
      ASSERT_TRUE(grad.defined()) << name << " is not in the forward";
      EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << name;
    }
  }
  // The extra blocks' multiply-adds, one 28 px image: two 32-channel convs at 14x14, two 96-channel ones at 7x7.
  const double extra = 2.0 * 32 * 32 * 9 * 14 * 14 + 2.0 * 96 * 96 * 9 * 7 * 7;
  EXPECT_DOUBLE_EQ(model_forward_macs(*small_cnn(1), {1, 28, 28}) - model_forward_macs(*small_cnn(0), {1, 28, 28}),
                   extra);
}

TEST(SmallCnnDepth, MinusOneHasNoResidualBlocks) {
  auto base = small_cnn(0), shallow = small_cnn(-1);
  EXPECT_EQ(parameter_names(*shallow), names_of({"stem", "stage1", "stage2", "fc"}));
  EXPECT_EQ(parameter_count(*base) - parameter_count(*shallow), block_parameters(32) + block_parameters(96));
  EXPECT_EQ(shallow->forward(torch::randn({2, 1, 28, 28})).sizes(), (at::IntArrayRef{2, 10}));
}

TEST(SmallCnnDepth, OtherModelsAndOutOfRangeValuesAreRefused) {
  const auto made = input_error_of([] { model_make(ModelOptions("resnet18").depth_delta(1)); });
  EXPECT_NE(made.find("--depth-delta"), std::string::npos) << made;
  EXPECT_NE(made.find("resnet18"), std::string::npos) << made;
  EXPECT_THROW(model_make(ModelOptions("small_cnn").depth_delta(-2)), InputError);

  TrainConfig config;
  config.model.name = "mobilenet_v2";
  config.model.depth_delta = 1;
  const auto validated = input_error_of([&] { config_validate(config); });
  EXPECT_NE(validated.find("--depth-delta"), std::string::npos) << validated;
  EXPECT_NE(validated.find("mobilenet_v2"), std::string::npos) << validated;
  config.model.name = "small_cnn";
  EXPECT_NO_THROW(config_validate(config));
  for (const int64_t d : {-2, 4}) {
    config.model.depth_delta = d;
    EXPECT_THROW(config_validate(config), InputError) << d;
  }
}
