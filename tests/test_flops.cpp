// FLOP counting (models/flops.h): exact multiply-adds of single layers computed by hand, and whole models
// against the counts PyTorch module hooks give for the same layer shapes (tests/tools/reference_models.py):
// CIFAR ResNet18 555,422,720 MACs (the "0.56 GFLOPs" usually quoted are these multiply-adds),
// ImageNet ResNet50 4,089,184,256 ("4.1 G"), ImageNet MobileNetV2 300,774,272 ("300 M multiply-adds").
#include "fastloop/core/errors.h"
#include "fastloop/models/flops.h"
#include "fastloop/models/registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

using fastloop::count_multiply_adds;
using fastloop::model_make;
using fastloop::ModelOptions;

double module_macs(torch::nn::AnyModule module, const at::Tensor& input) {
  torch::NoGradGuard no_grad;
  return count_multiply_adds([&] { module.forward(input); });
}

double model_macs(const std::string& name, const std::string& stem, int64_t classes, std::vector<int64_t> shape) {
  auto model = model_make(ModelOptions(name).stem(stem).in_channels(shape[0]).num_classes(classes));
  return fastloop::model_forward_macs(*model, shape);
}

} // namespace

TEST(Flops, ConvolutionCountsOutputElementsTimesKernelVolume) {
  // 3→16, 3x3, padding 1, on 8x8: 16·8·8 outputs, each 3·3·3 = 27 multiply-adds.
  auto conv = torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 16, 3).padding(1).bias(false));
  EXPECT_EQ(module_macs(torch::nn::AnyModule(conv), torch::zeros({1, 3, 8, 8})), 16.0 * 8 * 8 * 27);
  // Two images: twice as many.
  EXPECT_EQ(module_macs(torch::nn::AnyModule(conv), torch::zeros({2, 3, 8, 8})), 2 * 16.0 * 8 * 8 * 27);
}

TEST(Flops, GroupedAndDepthwiseConvolutionsDivideByGroups) {
  // 8→16 in 4 groups, stride 2 on 10x10 → 5x5: 16·25 outputs, each (8/4)·9 = 18.
  auto grouped = torch::nn::Conv2d(torch::nn::Conv2dOptions(8, 16, 3).stride(2).padding(1).groups(4));
  EXPECT_EQ(module_macs(torch::nn::AnyModule(grouped), torch::zeros({1, 8, 10, 10})), 16.0 * 25 * 18);
  // Depthwise 16 channels, 3x3 on 6x6: 16·36 outputs, each 9.
  auto depthwise = torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 16, 3).padding(1).groups(16));
  EXPECT_EQ(module_macs(torch::nn::AnyModule(depthwise), torch::zeros({1, 16, 6, 6})), 16.0 * 36 * 9);
}

TEST(Flops, TransposedConvolutionCountsInputElements) {
  // 4→6, 2x2 stride 2 on 3x3: each of the 4·9 input elements feeds 6·2·2 outputs.
  auto up = torch::nn::ConvTranspose2d(torch::nn::ConvTranspose2dOptions(4, 6, 2).stride(2));
  EXPECT_EQ(module_macs(torch::nn::AnyModule(up), torch::zeros({1, 4, 3, 3})), 4.0 * 9 * 6 * 4);
}

TEST(Flops, LinearCountsOnceThoughItCallsAddmm) {
  auto fc = torch::nn::Linear(100, 10);  // with bias: aten::linear → aten::addmm, counted once
  EXPECT_EQ(module_macs(torch::nn::AnyModule(fc), torch::zeros({2, 100})), 2.0 * 100 * 10);
  // A 3-D input goes linear → matmul → mm: still once, 2·5 rows.
  EXPECT_EQ(module_macs(torch::nn::AnyModule(fc), torch::zeros({2, 5, 100})), 10.0 * 100 * 10);
  auto no_bias = torch::nn::Linear(torch::nn::LinearOptions(100, 10).bias(false));
  EXPECT_EQ(module_macs(torch::nn::AnyModule(no_bias), torch::zeros({3, 100})), 3.0 * 100 * 10);
}

TEST(Flops, PlainMatrixProductsCountAndOtherOpsDoNot) {
  const auto a = torch::ones({4, 6}), b = torch::ones({6, 5});
  EXPECT_EQ(count_multiply_adds([&] { at::mm(a, b); }), 4.0 * 6 * 5);
  EXPECT_EQ(count_multiply_adds([&] { at::matmul(a, b); }), 4.0 * 6 * 5);
  EXPECT_EQ(count_multiply_adds([&] { at::bmm(a.unsqueeze(0).repeat({3, 1, 1}), b.unsqueeze(0).repeat({3, 1, 1})); }),
            3.0 * 4 * 6 * 5);
  EXPECT_EQ(count_multiply_adds([&] { at::relu(a + a).sum(); }), 0.0);
}

TEST(Flops, CifarResNet18IsPoint56GigaMultiplyAdds) {
  const double macs = model_macs("resnet18", "cifar", 10, {3, 32, 32});
  EXPECT_EQ(macs, 555422720.0);  // = PyTorch forward hooks on tests/tools/reference_models.py's twin
  auto model = model_make(ModelOptions("resnet18"));
  EXPECT_EQ(fastloop::model_forward_flops(*model, {3, 32, 32}), 2 * 555422720.0);
}

TEST(Flops, CifarModelsOfTheBenchMatchPythonHookCounts) {
  EXPECT_EQ(model_macs("resnet50", "cifar", 10, {3, 32, 32}), 1297829888.0);
  EXPECT_EQ(model_macs("resnet101", "cifar", 10, {3, 32, 32}), 2509983744.0);
  EXPECT_EQ(model_macs("mobilenet_v2", "cifar", 10, {3, 32, 32}), 87976448.0);
  EXPECT_EQ(model_macs("small_cnn", "cifar", 10, {1, 28, 28}), 20886720.0);
}

TEST(Flops, ImageNetResNet50AndMobileNetV2MatchPublishedCounts) {
  EXPECT_EQ(model_macs("resnet50", "imagenet", 1000, {3, 224, 224}), 4089184256.0);        // "4.1 G"
  EXPECT_EQ(model_macs("mobilenet_v2", "imagenet", 1000, {3, 224, 224}), 300774272.0);     // "300 M"
}

TEST(Flops, CountingLeavesTheModelInItsTrainingModeAndUnchanged) {
  auto model = model_make(ModelOptions("resnet18"));
  model->train();
  const auto before = model->named_buffers()["bn1.running_mean"].clone();
  fastloop::model_forward_macs(*model, {3, 32, 32});
  EXPECT_TRUE(model->is_training());
  EXPECT_TRUE(torch::equal(model->named_buffers()["bn1.running_mean"], before));
  // The callback is gone: a later forward is not counted anywhere and a new count starts from zero.
  EXPECT_EQ(count_multiply_adds([] {}), 0.0);
}

TEST(Flops, BadImageShapeIsAnInputError) {
  auto model = model_make(ModelOptions("resnet18"));
  EXPECT_THROW(fastloop::model_forward_macs(*model, {32, 32}), fastloop::InputError);
  EXPECT_THROW(fastloop::model_forward_macs(*model, {3, 0, 32}), fastloop::InputError);
}
