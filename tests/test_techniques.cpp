// Each speed technique keeps results within its stated tolerance: channels_last, set_to_none,
// gradient accumulation, fused optimizers, bf16 autocast, GradScaler, InferenceMode, conv+BN folding.
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/registry.h"
#include "fastloop/train/cuda_graph.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/optim.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/step.h"
#include "fastloop/train/trainer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace fastloop;

namespace {
// Relative difference, with an absolute floor of 1e-6 for values near zero.
double rel_diff(const at::Tensor& a, const at::Tensor& b) {
  return ((a - b).abs().max() / (b.abs().max() + 1e-6)).item<double>();
}

// A model without batch statistics, so a big batch and its micro-batches see the same function.
struct NoBatchStatsImpl : ClassifierImpl {
  NoBatchStatsImpl() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 8, 3).padding(1)));
    fc = register_module("fc", torch::nn::Linear(8 * 8 * 8, 10));
  }
  at::Tensor forward(at::Tensor x) override { return fc(torch::relu(conv(x)).flatten(1)); }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear fc{nullptr};
};

Classifier small_model(uint64_t seed = 0) {
  torch::manual_seed(seed);
  return model_make(ModelOptions("small_cnn").in_channels(1).num_classes(10));
}

std::pair<at::Tensor, at::Tensor> batch(int64_t n, uint64_t seed = 1) {
  torch::manual_seed(seed);
  return {torch::randn({n, 1, 8, 8}), torch::randint(0, 10, {n}, torch::kLong)};
}
}  // namespace

TEST(Techniques, ChannelsLastMatchesContiguousOutputsAndGradients) {
  at::set_num_threads(1);
  auto a = small_model(), b = small_model();
  module_to_channels_last(*b);
  auto [x, y] = batch(6);
  auto la = classification_loss(a->forward(x), y, 0.0);
  auto lb = classification_loss(b->forward(x.contiguous(at::MemoryFormat::ChannelsLast)), y, 0.0);
  EXPECT_LE(rel_diff(lb, la), 1e-5);
  la.backward();
  lb.backward();
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_LE(rel_diff(pb[i].grad(), pa[i].grad()), 1e-5) << "parameter " << i;
  EXPECT_TRUE(b->parameters()[0].is_contiguous(at::MemoryFormat::ChannelsLast));
}

TEST(Techniques, SetToNoneGivesBitwiseEqualParametersToZeroing) {
  at::set_num_threads(1);
  auto a = small_model(), b = small_model();
  OptimConfig sgd;
  auto oa = optimizer_make(sgd, a->parameters()), ob = optimizer_make(sgd, b->parameters());
  GradScaler off(GradScalerOptions().enabled(false));
  StepOptions none, zero;
  zero.set_to_none = false;
  for (int step = 0; step < 4; ++step) {
    auto [x, y] = batch(8, step);
    train_micro_step(*a, x, y, none, 1, off);
    train_optimizer_step(*oa, off, none);
    train_micro_step(*b, x, y, zero, 1, off);
    train_optimizer_step(*ob, off, zero);
  }
  EXPECT_FALSE(a->parameters()[0].grad().defined());
  EXPECT_TRUE(b->parameters()[0].grad().defined());
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(torch::equal(pa[i], pb[i])) << "parameter " << i;
}

TEST(Techniques, AccumulatingFourMicroBatchesMatchesOneBatch) {
  at::set_num_threads(1);
  torch::manual_seed(3);
  auto whole = std::make_shared<NoBatchStatsImpl>();
  auto parts = std::make_shared<NoBatchStatsImpl>();
  for (size_t i = 0; i < whole->parameters().size(); ++i) parts->parameters()[i].data().copy_(whole->parameters()[i]);
  OptimConfig sgd;
  auto ow = optimizer_make(sgd, whole->parameters()), op = optimizer_make(sgd, parts->parameters());
  GradScaler off(GradScalerOptions().enabled(false));
  StepOptions options;
  auto [x, y] = batch(16);
  train_micro_step(*whole, x, y, options, 1, off);
  train_optimizer_step(*ow, off, options);
  for (int64_t k = 0; k < 4; ++k) train_micro_step(*parts, x.slice(0, 4 * k, 4 * k + 4), y.slice(0, 4 * k, 4 * k + 4), options, 4, off);
  train_optimizer_step(*op, off, options);
  for (size_t i = 0; i < whole->parameters().size(); ++i)
    EXPECT_LE(rel_diff(parts->parameters()[i], whole->parameters()[i]), 1e-5) << "parameter " << i;
}

TEST(Techniques, FusedOptimizersMatchPlainOnes) {
  at::set_num_threads(1);
  for (const char* name : {"sgd", "adamw"}) {
    auto a = small_model(), b = small_model();
    OptimConfig config;
    config.name = name;
    config.lr = std::string(name) == "sgd" ? 0.1 : 1e-3;
    auto plain = optimizer_make(config, a->parameters(), false), fused = optimizer_make(config, b->parameters(), true);
    auto pa = a->parameters(), pb = b->parameters();
    for (int step = 0; step < 3; ++step) {  // the same gradients for both, so only the update differs
      auto [x, y] = batch(8, step);
      classification_loss(a->forward(x), y, 0.0).backward();
      for (size_t i = 0; i < pa.size(); ++i) pb[i].mutable_grad() = pa[i].grad().clone();
      plain->step();
      fused->step();
      plain->zero_grad();
      fused->zero_grad();
      for (size_t i = 0; i < pa.size(); ++i) {
        EXPECT_LE(rel_diff(pb[i], pa[i]), 1e-6) << name << " step " << step << " parameter " << i;
        pb[i].data().copy_(pa[i].data());  // the next forward sees identical weights
      }
    }
  }
}

TEST(Techniques, FusedOptimizerStateLoadsIntoPlainOne) {
  auto a = small_model();
  OptimConfig config;
  auto fused = optimizer_make(config, a->parameters(), true);
  auto [x, y] = batch(8);
  train_step(*a, *fused, x, y, 0.0);
  torch::serialize::OutputArchive out;
  fused->save(out);
  std::ostringstream bytes;
  out.save_to(bytes);
  torch::serialize::InputArchive in;
  const std::string s = bytes.str();
  in.load_from(s.data(), s.size());
  auto plain = optimizer_make(config, a->parameters(), false);
  EXPECT_NO_THROW(plain->load(in));
}

TEST(Techniques, Bf16AutocastLossIsWithin1e2OfFloat32) {
  auto model = small_model();
  model->eval();
  auto [x, y] = batch(16);
  auto fp32 = classification_loss(model->forward(x), y, 0.0).item<double>();
  double bf16;
  {
    AutocastScope autocast(at::kCPU, true, at::kBFloat16);
    auto logits = model->forward(x);
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    bf16 = classification_loss(logits, y, 0.0).item<double>();
  }
  EXPECT_NEAR(bf16, fp32, 1e-2);
  EXPECT_EQ(model->forward(x).scalar_type(), at::kFloat) << "autocast must end with its scope";
}

TEST(Techniques, GradScalerSkipsAndBacksOffOnInfThenGrows) {
  auto param = torch::ones({3}, torch::requires_grad());
  torch::optim::SGD sgd({param}, torch::optim::SGDOptions(0.1));
  GradScaler scaler(GradScalerOptions().init_scale(1024).growth_interval(3));
  auto step_with_grad = [&](float g) {
    scaler.scale(param.sum() * g).backward();
    const bool stepped = scaler.step(sgd);
    scaler.update();
    sgd.zero_grad();
    return stepped;
  };
  EXPECT_FALSE(step_with_grad(std::numeric_limits<float>::infinity()));
  EXPECT_TRUE(torch::equal(param, torch::ones({3}))) << "a skipped step leaves the parameters";
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0);
  EXPECT_FALSE(step_with_grad(std::numeric_limits<float>::quiet_NaN()));
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 256.0);
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(step_with_grad(1.0f));
  EXPECT_DOUBLE_EQ(scaler.current_scale(), 512.0) << "grows x2 after growth_interval clean steps";
  EXPECT_TRUE(torch::allclose(param, torch::full({3}, 1.0 - 3 * 0.1))) << "unscaled gradients were applied";
}

TEST(Techniques, InferenceModeOutputEqualsNoGradOutput) {
  auto model = small_model();
  model->eval();
  auto [x, y] = batch(4);
  at::Tensor a, b;
  {
    torch::NoGradGuard no_grad;
    a = model->forward(x);
  }
  {
    c10::InferenceMode inference;
    b = model->forward(x);
  }
  EXPECT_TRUE(torch::equal(a, b));
}

// Folding BN into the conv before it changes eval outputs by rounding only (<= 1e-5 relative), covers
// every BatchNorm of our models, and restores the exact weights afterwards.
TEST(Techniques, FoldedBatchNormEvalMatchesUnfolded) {
  for (const std::string name : {"small_cnn", "resnet18", "mobilenet_v2"}) {
    SCOPED_TRACE(name);
    torch::manual_seed(3);
    Classifier model = model_make(ModelOptions(name).in_channels(3).num_classes(10));
    // Non-trivial statistics and affine parameters, as after training.
    torch::NoGradGuard no_grad;
    size_t batchnorms = 0;
    for (auto& module : model->modules()) {
      if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        bn->running_mean.uniform_(-0.5, 0.5), bn->running_var.uniform_(0.5, 2.0);
        bn->weight.uniform_(0.5, 1.5), bn->bias.uniform_(-0.2, 0.2);
        ++batchnorms;
      }
    }
    model->eval();
    const auto images = torch::randn({4, 3, 32, 32});
    const auto unfolded = model->forward(images);
    std::vector<at::Tensor> before;
    for (const auto& p : model->parameters()) before.push_back(p.clone());
    {
      BatchNormFolding folding(*model);
      EXPECT_EQ(folding.folded(), batchnorms);
      EXPECT_LE(rel_diff(model->forward(images), unfolded), 1e-5);
    }
    size_t i = 0;
    for (const auto& p : model->parameters()) EXPECT_TRUE(p.equal(before[i++]));
    EXPECT_TRUE(model->forward(images).equal(unfolded));  // BatchNorms are back
  }
}

TEST(Techniques, CudaGraphIsRefusedWithAReasonOnTheCpu) {
  auto model = small_model();
  auto [images, labels] = batch(8);
  GradScaler no_scaling(GradScalerOptions().enabled(false));
  std::string why;
  EXPECT_EQ(graphed_step_make(*model, StepOptions{}, no_scaling, images, labels, 1, &why), nullptr);
  EXPECT_NE(why.find("CUDA"), std::string::npos) << why;
}

// Replaying the captured micro-step gives the parameters eager steps give (same kernels; <= 1e-5).
TEST(Techniques, CudaGraphStepsMatchEagerSteps_CUDA) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible";
  const torch::Device cuda(torch::kCUDA);
  auto eager = small_model(5), graphed_model = small_model(5);
  eager->to(cuda), graphed_model->to(cuda);
  auto opt_a = optimizer_make(OptimConfig{}, eager->parameters(), false);
  auto opt_b = optimizer_make(OptimConfig{}, graphed_model->parameters(), false);
  GradScaler scaler_a(GradScalerOptions().enabled(false)), scaler_b(GradScalerOptions().enabled(false));
  StepOptions options;
  std::unique_ptr<GraphedStep> graph;
  for (int step = 0; step < 6; ++step) {
    auto [images, labels] = batch(16, 10 + step);
    images = images.to(cuda), labels = labels.to(cuda);
    train_micro_step(*eager, images, labels, options, 1, scaler_a);
    train_optimizer_step(*opt_a, scaler_a, options);
    if (step == 2) {  // after warm-up, as the trainer does
      std::string why;
      graph = graphed_step_make(*graphed_model, options, scaler_b, images, labels, 1, &why);
      ASSERT_NE(graph, nullptr) << why;
    }
    StepOptions graphed_options = options;
    graphed_options.keep_gradients = static_cast<bool>(graph);
    if (graph) graph->run(images, labels);
    else train_micro_step(*graphed_model, images, labels, options, 1, scaler_b);
    train_optimizer_step(*opt_b, scaler_b, graphed_options);
  }
  auto a = eager->parameters(), b = graphed_model->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(rel_diff(b[i].cpu(), a[i].cpu()), 1e-5) << i;
}

TEST(Techniques, AccumulationStepsOncePerCycleWithAPartialLastCycle) {
  TrainConfig config;
  config.data.source = "synthetic:1x8x8:192";  // 6 batches of 32
  config.perf.device = "cpu";
  config.data.batch_size = 32;
  config.run.epochs = 2;
  config.run.threads = 1;
  config.perf.accumulate = 4;                  // cycles of 4 + 2 batches: 2 steps per epoch
  TrainControl quiet;
  quiet.progress = false;
  auto summary = train(config, quiet);
  EXPECT_EQ(summary.position.step, 4);
  EXPECT_EQ(summary.position.epoch, 2);
}
