// The built-in models against their Python twins (tests/tools/reference_models.py → tests/golden/models.json):
// parameter counts, parameter and buffer names and shapes, forward shapes, and no conv bias before BN.
#include "fastloop/core/errors.h"
#include "fastloop/models/registry.h"
#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using fastloop::model_make;
using fastloop::ModelOptions;

nlohmann::json golden_models() {
  std::ifstream in(fastloop::test::golden_dir() + "/models.json");  // made by the venv's torch at build time
  EXPECT_TRUE(in) << "missing tests/golden/models.json; run tests/tools/make_golden.py";
  return nlohmann::json::parse(in)["models"];
}

std::string describe(const nlohmann::json& m) {
  return m["name"].get<std::string>() + "/" + m["stem"].get<std::string>() + " in=" +
         std::to_string(m["in_channels"].get<int64_t>()) +
         " classes=" + std::to_string(m["num_classes"].get<int64_t>());
}

template <typename Dict>
nlohmann::json names_and_shapes(const Dict& dict) {
  auto out = nlohmann::json::array();
  for (const auto& item : dict) out.push_back({item.key(), item.value().sizes().vec()});
  return out;
}

/// The six models fastloop builds itself. model_names() lists them first, then every model this process
/// registered: gtest runs all suites in one process, and TorchScript.* registers test_tiny_net, which has
/// no golden counts and no BatchNorm.
std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& name : fastloop::model_names())
    if (fastloop::model_is_builtin(name)) names.push_back(name);
  return names;
}

std::string expect_input_error(const ModelOptions& options) {
  try {
    model_make(options);
  } catch (const fastloop::InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for model '" << options.name() << "' stem '" << options.stem() << "'";
  return "";
}

} // namespace

TEST(Models, CifarResNet18HasTorchvisionParameterCount) {
  // kuangliu/pytorch-cifar's ResNet18: the reference number of the benchmark seed.
  EXPECT_EQ(fastloop::parameter_count(*model_make(ModelOptions("resnet18"))), 11173962);
}

TEST(Models, ImageNetStemModelsHaveTorchvisionParameterCounts) {
  auto count = [](const std::string& name) {
    return fastloop::parameter_count(*model_make(ModelOptions(name).stem("imagenet").num_classes(1000)));
  };
  EXPECT_EQ(count("resnet18"), 11689512);
  EXPECT_EQ(count("resnet50"), 25557032);
  EXPECT_EQ(count("mobilenet_v2"), 3504872);
}

TEST(Models, EveryModelMatchesPythonCountsNamesAndShapes) {
  const auto models = golden_models();
  ASSERT_GE(models.size(), 11u);
  for (const auto& m : models) {
    SCOPED_TRACE(describe(m));
    auto model = model_make(ModelOptions(m["name"].get<std::string>())
                                .stem(m["stem"].get<std::string>())
                                .in_channels(m["in_channels"].get<int64_t>())
                                .num_classes(m["num_classes"].get<int64_t>()));
    EXPECT_EQ(fastloop::parameter_count(*model), m["parameters"].get<int64_t>());
    // Same names in the same order: a Python state dict loads into the C++ model by name.
    EXPECT_EQ(names_and_shapes(model->named_parameters()), m["named_parameters"]);
    EXPECT_EQ(names_and_shapes(model->named_buffers()), m["named_buffers"]);
  }
}

TEST(Models, EveryModelAndStemGivesLogitsFor1Channel28pxAnd3Channel32pxImages) {
  torch::NoGradGuard no_grad;
  fastloop::test::ThreadCount threads(1);
  for (const auto& name : builtin_model_names()) {
    for (const auto& stem : fastloop::model_stems(name)) {
      for (const auto& [channels, side] : {std::pair<int64_t, int64_t>{1, 28}, {3, 32}}) {
        SCOPED_TRACE(name + "/" + stem + " " + std::to_string(channels) + "x" + std::to_string(side));
        auto model = model_make(ModelOptions(name).stem(stem).in_channels(channels).num_classes(7));
        model->train();  // batch statistics, as in training; 2 images keep the 1x1 maps well defined
        auto logits = model->forward(torch::randn({2, channels, side, side}));
        EXPECT_EQ(logits.sizes().vec(), (std::vector<int64_t>{2, 7}));
        EXPECT_TRUE(logits.isfinite().all().item<bool>());
      }
    }
  }
}

TEST(Models, NoConvFollowedByBatchNormHasABias) {
  for (const auto& name : builtin_model_names()) {
    for (const auto& stem : fastloop::model_stems(name)) {
      SCOPED_TRACE(name + "/" + stem);
      auto model = model_make(ModelOptions(name).stem(stem));
      // Leaves in registration order: a conv's next leaf is the BN it feeds.
      std::vector<std::shared_ptr<torch::nn::Module>> leaves;
      for (const auto& m : model->modules(/*include_self=*/false)) {
        if (m->children().empty()) leaves.push_back(m);
      }
      int pairs = 0;
      for (size_t i = 0; i + 1 < leaves.size(); ++i) {
        auto* conv = leaves[i]->as<torch::nn::Conv2d>();
        if (!conv || !leaves[i + 1]->as<torch::nn::BatchNorm2d>()) continue;
        ++pairs;
        EXPECT_FALSE(conv->bias.defined()) << "conv leaf " << i << " has a bias before its BatchNorm";
      }
      EXPECT_GT(pairs, 0);
    }
  }
}

TEST(Models, ModelNamesListsTheSixBuiltInModelsFirst) {
  const std::vector<std::string> builtin{"resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2", "small_cnn"};
  const auto names = fastloop::model_names();  // then the ones registered in this process, if any
  ASSERT_GE(names.size(), builtin.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6), builtin);
  for (size_t i = builtin.size(); i < names.size(); ++i) EXPECT_FALSE(fastloop::model_is_builtin(names[i])) << names[i];
  EXPECT_EQ(builtin_model_names(), builtin);
}

TEST(Models, UnknownNameOrStemThrowsInputErrorListingTheChoices) {
  const auto bad_name = expect_input_error(ModelOptions("resnet19"));
  EXPECT_NE(bad_name.find("resnet19"), std::string::npos) << bad_name;
  EXPECT_NE(bad_name.find("resnet18, resnet34"), std::string::npos) << bad_name;
  EXPECT_NE(bad_name.find("small_cnn"), std::string::npos) << bad_name;

  const auto bad_stem = expect_input_error(ModelOptions("resnet50").stem("tiny"));
  EXPECT_NE(bad_stem.find("'tiny'"), std::string::npos) << bad_stem;
  EXPECT_NE(bad_stem.find("cifar, imagenet"), std::string::npos) << bad_stem;

  EXPECT_NE(expect_input_error(ModelOptions("small_cnn").stem("imagenet")).find("cifar"), std::string::npos);
  EXPECT_FALSE(expect_input_error(ModelOptions("resnet18").num_classes(0)).empty());
  EXPECT_FALSE(expect_input_error(ModelOptions("mobilenet_v2").dropout(1.0)).empty());
}
