// TorchScript models (--model torchscript:FILE.pt) and registered C++ models. Parity: scripted torchvision
// ResNet, EfficientNet (SiLU, squeeze-excitation, stochastic depth, dropout: RNG aligned by seeding before
// the step) and VisionTransformer give eager PyTorch's logits, loss, BN running stats, gradients and one
// SGD/AdamW step within 1e-5 relative (tests/tools/make_torchscript_golden.py); then the techniques of a run,
// and every bad input as an InputError found before training.
#include "test_support.h"
#include "fastloop/core/errors.h"
#include "fastloop/io/weights.h"
#include "fastloop/models/fold_bn.h"
#include "fastloop/models/registry.h"
#include "fastloop/models/torchscript.h"
#include "fastloop/train/amp.h"
#include "fastloop/train/checkpoint.h"
#include "fastloop/train/evaluate.h"
#include "fastloop/train/runtime.h"
#include "fastloop/train/trainer.h"
#include "golden_support.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

using namespace fastloop;
using fastloop::test::kTorchScriptDir;
namespace fs = std::filesystem;

namespace {

using nlohmann::json;

constexpr double kRelTol = 1e-5;
constexpr double kFloorOfRms = 1e-3;  // as test_parity.cpp: near-zero entries compared at 1e-3 x the RMS
constexpr int64_t kSamples = 8;

double norm64(const at::Tensor& t) { return t.detach().to(torch::kFloat64).norm().item<double>(); }

void expect_close(double actual, double expected, double floor, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), kRelTol * std::max(std::abs(expected), floor))
      << what << ": fastloop " << actual << ", PyTorch " << expected;
}

void expect_samples(const at::Tensor& t, const json& expected, double rms, const std::string& what) {
  auto flat = t.detach().reshape(-1).to(torch::kFloat64);
  const int64_t n = flat.numel();
  for (int64_t j = 0; j < kSamples; ++j)
    expect_close(flat[(j * (n - 1)) / (kSamples - 1)].item<double>(), expected[j].get<double>(), kFloorOfRms * rms,
                 what + "[" + std::to_string(j) + "]");
}

/// One training step through model_make("torchscript:FILE") against eager PyTorch's, as test_parity.cpp.
void check_parity(const std::string& family, TorchScriptExecutor executor) {
  const json g = test::torchscript_golden(family);
  test::ThreadCount threads(1);
  auto model = torchscript_load(kTorchScriptDir + g["file"].get<std::string>(), executor);
  std::vector<std::string> params_names, buffer_names;
  for (const auto& p : model->named_parameters()) params_names.push_back(p.key());
  for (const auto& b : model->named_buffers()) buffer_names.push_back(b.key());
  ASSERT_EQ(json(params_names), g["param_names"]) << "parameter names or order differ from PyTorch";
  ASSERT_EQ(json(buffer_names), g["buffer_names"]) << "buffer names or order differ from PyTorch";
  model->train();

  const auto shape = g["input_shape"].get<std::vector<int64_t>>();
  const int64_t numel = shape[0] * shape[1] * shape[2] * shape[3];
  auto x = torch::sin(torch::arange(numel, torch::kFloat64).mul(0.11).add(0.3)).to(torch::kFloat32).reshape(shape);
  auto labels = torch::tensor(g["labels"].get<std::vector<int64_t>>(), torch::kInt64);
  torch::manual_seed(0);  // dropout and stochastic depth draw what PyTorch drew after torch.manual_seed(0)
  auto logits = model->forward(x);
  auto loss = torch::nn::functional::cross_entropy(
      logits, labels, torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(0.1));
  loss.backward();

  const double logits_rms = norm64(logits) / std::sqrt(static_cast<double>(logits.numel()));
  auto flat = logits.detach().reshape(-1).to(torch::kFloat64);
  ASSERT_EQ(static_cast<size_t>(flat.numel()), g["logits"].size());
  for (int64_t i = 0; i < flat.numel(); ++i)
    expect_close(flat[i].item<double>(), g["logits"][i].get<double>(), kFloorOfRms * logits_rms, "logits");
  expect_close(loss.item<double>(), g["loss"].get<double>(), 0.0, "loss");
  const auto buffers = model->named_buffers();
  for (const auto& r : g["running_stats"])
    expect_close(norm64(buffers[r["name"].get<std::string>()]), r["norm"].get<double>(), 0.0, r["name"].get<std::string>());

  auto named = model->named_parameters();
  std::vector<at::Tensor> params, originals;
  for (size_t i = 0; i < named.size(); ++i) {
    const auto& p = named[i].value();
    const auto& w = g["params"][i];
    ASSERT_TRUE(p.grad().defined()) << named[i].key() << " got no gradient";
    expect_close(norm64(p.grad()), w["grad_norm"].get<double>(), 0.0, named[i].key() + " grad norm");
    expect_samples(p.grad(), w["grad"], w["grad_norm"].get<double>() / std::sqrt(double(p.numel())), named[i].key());
    params.push_back(p);
    originals.push_back(p.detach().clone());
  }
  auto check_step = [&](torch::optim::Optimizer&& optimizer, const std::string& key) {
    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < params.size(); ++i) params[i].copy_(originals[i]);
    }
    optimizer.step();
    for (size_t i = 0; i < params.size(); ++i) {
      const auto& w = g["params"][i];
      const double want = w[key + "_norm"].get<double>();
      expect_close(norm64(params[i]), want, 0.0, named[i].key() + " after " + key);
      expect_samples(params[i], w[key], want / std::sqrt(double(params[i].numel())), named[i].key() + " " + key);
    }
  };
  check_step(torch::optim::SGD(params, torch::optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(5e-4)),
             "sgd");
  check_step(torch::optim::AdamW(params, torch::optim::AdamWOptions(1e-3).weight_decay(1e-2)), "adamw");
}

std::string load_error(const std::string& name, int64_t classes = 10) {
  try {
    auto model = model_make(ModelOptions(name));
    model_check_forward(*model, name, {3, 16, 16}, classes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TrainConfig script_config(const std::string& family = "resnet", int64_t images = 64) {
  TrainConfig config = test::tiny_config(images, 16);
  config.data.source = "synthetic:3x16x16:" + std::to_string(images);
  config.model.name = "torchscript:" + kTorchScriptDir + family + ".pt";
  return config;
}

}  // namespace

TEST(TorchScript, ScriptedResNetTrainsOneStepLikeEagerPyTorch) { check_parity("resnet", torchscript_executor_default()); }
TEST(TorchScript, ScriptedEfficientNetWithDropoutAndStochasticDepthTrainsOneStepLikeEagerPyTorch) {
  check_parity("efficientnet", torchscript_executor_default());
}
TEST(TorchScript, ScriptedVisionTransformerTrainsOneStepLikeEagerPyTorch) { check_parity("vit", torchscript_executor_default()); }
TEST(TorchScript, EveryExecutorGivesTheSameStep) {
  for (auto executor : {TorchScriptExecutor::kProfiling, TorchScriptExecutor::kUnoptimized, TorchScriptExecutor::kSimple}) {
    SCOPED_TRACE(torchscript_executor_name(executor));
    check_parity("efficientnet", executor);
  }
  torchscript_executor_apply(torchscript_executor_default());
}

TEST(TorchScript, TheMirrorSharesTensorsWithTheScriptModuleThroughDeviceLayoutAndMode) {
  auto model = torchscript_load(kTorchScriptDir + "resnet.pt");
  module_to_channels_last(*model);
  const auto script_params = model->script_module().named_parameters();
  const auto mirror = model->named_parameters();
  ASSERT_EQ(script_params.size(), mirror.size());
  for (const auto& p : script_params) {
    EXPECT_TRUE(p.value.is_same(mirror[p.name])) << p.name;
    if (p.value.dim() == 4) {
      EXPECT_TRUE(p.value.is_contiguous(at::MemoryFormat::ChannelsLast)) << p.name;
    }
  }
  model->eval();
  EXPECT_FALSE(model->script_module().is_training());
  for (const auto& child : model->script_module().modules()) EXPECT_FALSE(child.is_training());
  const auto mean = model->named_buffers()["bn1.running_mean"].clone();
  {
    c10::InferenceMode inference;  // evaluation's mode: no autograd, BatchNorm reads its running stats
    auto a = model->forward(torch::randn({2, 3, 16, 16}).contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_EQ(a.sizes(), (std::vector<int64_t>{2, 10}));
  }
  EXPECT_TRUE(mean.equal(model->named_buffers()["bn1.running_mean"])) << "eval mode must not update BN stats";
  model->train();
  EXPECT_TRUE(model->script_module().is_training());
}

TEST(TorchScript, AutocastBf16RunsTheScriptedGraphInBf16) {
  auto model = torchscript_load(kTorchScriptDir + "resnet.pt");
  AutocastScope autocast(at::kCPU, true, at::kBFloat16);
  auto logits = model->forward(torch::randn({2, 3, 16, 16}));
  EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
  logits.to(at::kFloat).sum().backward();
  for (const auto& p : model->parameters()) ASSERT_TRUE(p.grad().defined() && p.grad().scalar_type() == at::kFloat);
}

TEST(TorchScript, BadFilesAndModulesAreInputErrorsNamingTheFile) {
  const test::TempDir tmp;
  const std::string text_file = tmp.sub("ts_bad") + "/not_an_archive.pt";
  std::ofstream(text_file) << "not a zip archive";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"torchscript:" + kTorchScriptDir + "missing.pt", "does not exist"},
      {"torchscript:" + text_file, "could not be loaded as a torch.jit.save archive"},
      {"torchscript:" + kTorchScriptDir + "bad_two_inputs.pt", "forward must take one image batch"},
      {"torchscript:" + kTorchScriptDir + "bad_no_parameters.pt", "has no parameters"},
      {"torchscript:" + kTorchScriptDir + "bad_traced_eval_bn.pt", "training=False fixed at save time"},
      {"torchscript:" + kTorchScriptDir + "bad_output_shape.pt", "returned [2, 3, 16, 10]"},
      {"torchscript:" + kTorchScriptDir + "bad_forward_throws.pt", "failed on a probe batch [2, 3, 16, 16]"},
      {"torchscript:" + kTorchScriptDir + "bad_traced_train_bn.pt", "training=True fixed at save time"},
      {"torchscript:" + kTorchScriptDir + "bad_traced_dropout.pt", "aten::dropout runs with training=True"},
  };
  for (const auto& [name, expected] : cases) {
    const std::string error = load_error(name);
    EXPECT_NE(error.find(expected), std::string::npos) << name << ": " << error;
    EXPECT_NE(error.find(name.substr(12)), std::string::npos) << "the file is named: " << error;
  }
  EXPECT_NE(load_error("torchscript:" + kTorchScriptDir + "resnet.pt", 7).find("logits [N, 7]"), std::string::npos)
      << "10 logits for 7 classes";
}

TEST(TorchScript, CliRefusesBadModulesAndFoldBnBeforeTrainingWithExitTwo) {
  const std::string common = " --data synthetic:3x16x16:64 --batch-size 16 --epochs 1 --threads 1 --device cpu";
  auto bad = test::cli_run("train --model " + test::quoted("torchscript:" + kTorchScriptDir + "bad_output_shape.pt") + common);
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("bad_output_shape.pt"), std::string::npos) << bad.output;
  EXPECT_EQ(bad.output.find("test accuracy"), std::string::npos) << "found before training\n" << bad.output;
  auto fold = test::cli_run("train --fold-bn --model " + test::quoted("torchscript:" + kTorchScriptDir + "resnet.pt") + common);
  EXPECT_EQ(fold.code, 2) << fold.output;
  EXPECT_NE(fold.output.find("--fold-bn: the TorchScript model"), std::string::npos) << fold.output;
}

TEST(TorchScript, TrainsWithTechniquesResumesBitwiseAndExportsItsOwnStateDictNames) {
  const test::TempDir tmp;
  const auto straight_dir = tmp.sub("ts_straight"), resumed_dir = tmp.sub("ts_resumed");
  auto config_in = [&](const std::string& dir) {
    TrainConfig config = script_config("efficientnet", 96);
    config.run.epochs = 2;
    config.run.checkpoint_dir = dir;
    config.run.checkpoint_every = 2;
    config.perf.channels_last = true;
    config.perf.accumulate = 2;
    config.perf.fused_optim = true;
    config.data.workers = 2;
    return config;
  };
  TrainControl quiet;
  quiet.progress = false;
  auto straight = train(config_in(straight_dir), quiet);
  TrainControl stopping = quiet;
  stopping.should_stop = [](const TrainPosition& p) { return p.step == 3; };
  ASSERT_TRUE(train(config_in(resumed_dir), stopping).stopped);
  auto config = config_in(resumed_dir);
  config.run.resume = "on";
  auto resumed = train(config, quiet);
  EXPECT_EQ(resumed.position.step, straight.position.step);
  auto restored = [&](const std::string& dir) {
    auto model = model_make(ModelOptions(config.model.name));
    Checkpoint::read(checkpoint_path_in(dir)).restore(*model, nullptr, false);
    return model;
  };
  auto a = restored(straight_dir), b = restored(resumed_dir);
  for (const auto& item : a->named_parameters()) EXPECT_TRUE(item.value().equal(b->named_parameters()[item.key()])) << item.key();
  for (const auto& item : a->named_buffers()) EXPECT_TRUE(item.value().equal(b->named_buffers()[item.key()])) << item.key();

  // export: the module's own state_dict names (PyTorch loads them: the test below); --init-from that
  // file: every tensor loaded by name
  const std::string out = straight_dir + "/model.safetensors";
  auto exported = test::cli_run("export --checkpoint " + checkpoint_path_in(straight_dir) + " --out " + out);
  ASSERT_EQ(exported.code, 0) << exported.output;
  auto init = script_config("efficientnet");
  init.run.init_from = out;
  init.run.max_steps = 1;
  EXPECT_NO_THROW(train(init, quiet));
}

TEST(TorchScript, ExportedWeightsLoadStrictlyIntoTheScriptedModuleInPyTorch) {
  FASTLOOP_SKIP_WITHOUT_VENV();
  const test::TempDir tmp;
  TrainConfig config = script_config("efficientnet");
  config.run.max_steps = 1;
  config.run.checkpoint_dir = tmp.path();
  TrainControl quiet;
  quiet.progress = false;
  train(config, quiet);
  const std::string out = tmp / "model.safetensors";
  auto exported = test::cli_run("export --checkpoint " + checkpoint_path_in(tmp.path()) + " --out " + out);
  ASSERT_EQ(exported.code, 0) << exported.output;
  const std::string module = kTorchScriptDir + "efficientnet.pt";
  auto loaded = test::shell_run(test::python_word() + " -c \"import torch, safetensors.torch as s; m = torch.jit.load('" +
                                module + "'); m.load_state_dict(s.load_file('" + out + "'), strict=True); print('ok')\"");
  EXPECT_EQ(loaded.code, 0) << loaded.output;
  EXPECT_NE(loaded.output.find("ok"), std::string::npos) << loaded.output;
}

namespace {
struct TinyNetImpl : ClassifierImpl {
  explicit TinyNetImpl(const ModelOptions& o)
      : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(o.in_channels(), 8, 3)))),
        fc(register_module("fc", torch::nn::Linear(8, o.num_classes()))) {}
  at::Tensor forward(at::Tensor x) override {
    return fc(torch::flatten(torch::adaptive_avg_pool2d(torch::relu(conv(x)), {1, 1}), 1));
  }
  torch::nn::Conv2d conv;
  torch::nn::Linear fc;
};
}  // namespace

TEST(TorchScript, RegisteredCppModelTrainsThroughTheSameLoopAndRefusesFoldBn) {
  // Once per process (the registry keeps a name for good), so --gtest_repeat runs this test again.
  static const bool registered =
      (model_register("test_tiny_net", [](const ModelOptions& o) { return std::make_shared<TinyNetImpl>(o); }), true);
  ASSERT_TRUE(registered);
  EXPECT_THROW(model_register("test_tiny_net", [](const ModelOptions& o) { return std::make_shared<TinyNetImpl>(o); }),
               std::invalid_argument);
  EXPECT_THROW(model_register("resnet18", [](const ModelOptions& o) { return std::make_shared<TinyNetImpl>(o); }),
               std::invalid_argument);
  TrainConfig config = test::tiny_config(64, 16);
  config.model.name = "test_tiny_net";
  TrainControl quiet;
  quiet.progress = false;
  auto summary = train(config, quiet);
  EXPECT_EQ(summary.position.step, 4);
  config.perf.fold_bn = true;
  try {
    train(config, quiet);
    ADD_FAILURE() << "--fold-bn on a model without FoldableBatchNorm2d must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("FoldableBatchNorm2d"), std::string::npos) << e.what();
  }
}
